package io.falkon.provisioner;

import io.falkon.provisioner.lrm.PbsAdapter;
import io.falkon.provisioner.lrm.Shell;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The PBS adapter (Torque flavour) against Slurm's Torque-compatible qsub/qstat/qdel wrappers
 * (package slurm-wlm-torque, unpacked by start-slurm.sh) over the real SLURM on localhost. This is
 * PBS syntax on a SLURM back end, not PBS itself: no PBS is packaged for this system.
 */
class PbsAdapterIT extends LrmAdapterContract {
    private PbsAdapter adapter;

    @BeforeEach
    void pbs() throws Exception {
        adapter = new PbsAdapter(new Shell(Lrms.requirePbsWrappers(), Duration.ofSeconds(60)), PbsAdapter.Flavor.TORQUE);
    }

    @Override
    LrmAdapter adapter() {
        return adapter;
    }

    @Test
    void thePbsProFlavourAsksWithSelect() {
        String script = new PbsAdapter(new Shell(), PbsAdapter.Flavor.PRO).script(new JobRequest("pro", 3, 8,
                Duration.ofMinutes(90), List.of("/bin/true"), Path.of("/tmp")));
        assertThat(script).contains("#PBS -l select=3:ncpus=8:mpiprocs=1").contains("#PBS -l walltime=1:30:00")
                .contains("pbsdsh -u");
    }
}
