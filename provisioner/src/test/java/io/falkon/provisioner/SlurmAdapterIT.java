package io.falkon.provisioner;

import io.falkon.provisioner.lrm.Shell;
import io.falkon.provisioner.lrm.SlurmAdapter;
import org.junit.jupiter.api.BeforeEach;

/**
 * The SLURM adapter against the real slurmctld and two slurmd "nodes" on localhost (started by
 * src/test/lrm/start-slurm.sh when not running).
 */
class SlurmAdapterIT extends LrmAdapterContract {
    private final SlurmAdapter adapter = new SlurmAdapter(new Shell());

    @BeforeEach
    void slurm() throws Exception {
        Lrms.requireSlurm();
    }

    @Override
    LrmAdapter adapter() {
        return adapter;
    }
}
