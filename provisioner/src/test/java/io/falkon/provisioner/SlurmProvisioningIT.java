package io.falkon.provisioner;

import io.falkon.provisioner.lrm.Shell;
import io.falkon.provisioner.lrm.SlurmAdapter;
import org.junit.jupiter.api.BeforeEach;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Provisioning end to end through the real SLURM on localhost (two slurmd nodes): sbatch in, squeue empty at the end. */
class SlurmProvisioningIT extends ProvisioningContract {
    private final Shell shell = new Shell();

    @BeforeEach
    void slurm() throws Exception {
        Lrms.requireSlurm();
    }

    @Override
    LrmAdapter adapter() {
        return new SlurmAdapter(shell);
    }

    @Override
    int maxNodes() {
        return 2;
    }

    @Override
    void assertSchedulerIdle() throws Exception {
        assertThat(shell.check(List.of("squeue", "-h", "-o", "%i %j %T")).strip()).as("squeue").isEmpty();
    }
}
