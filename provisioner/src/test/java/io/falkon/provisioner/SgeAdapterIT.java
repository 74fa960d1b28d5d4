package io.falkon.provisioner;

import io.falkon.provisioner.lrm.SgeAdapter;
import io.falkon.provisioner.lrm.Shell;
import org.junit.jupiter.api.BeforeEach;

/**
 * The SGE adapter against the real sge_qmaster and sge_execd on localhost (started by
 * src/test/lrm/start-sge.sh when not running). SGE has one exec host here, so a job's "nodes"
 * (array tasks) all land on it.
 */
class SgeAdapterIT extends LrmAdapterContract {
    private final SgeAdapter adapter = new SgeAdapter(new Shell(), "smp");

    @BeforeEach
    void sge() throws Exception {
        Lrms.requireSge();
    }

    @Override
    LrmAdapter adapter() {
        return adapter;
    }
}
