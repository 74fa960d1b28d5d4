package io.falkon.provisioner;

import io.falkon.provisioner.lrm.SgeAdapter;
import io.falkon.provisioner.lrm.Shell;
import org.junit.jupiter.api.BeforeEach;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Provisioning end to end through the real SGE on localhost: qsub in, qstat empty at the end. */
class SgeProvisioningIT extends ProvisioningContract {
    private final Shell shell = new Shell();

    @BeforeEach
    void sge() throws Exception {
        Lrms.requireSge();
    }

    @Override
    LrmAdapter adapter() {
        return new SgeAdapter(shell, "smp");
    }

    @Override
    int maxNodes() {
        return 3;
    }

    @Override
    void assertSchedulerIdle() throws Exception {
        assertThat(shell.check(List.of("qstat", "-u", "*")).strip()).as("qstat").isEmpty();
    }
}
