package io.falkon.provisioner;

import io.falkon.provisioner.lrm.CobaltAdapter;
import io.falkon.provisioner.lrm.Shell;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Cobalt adapter against a FAKE Cobalt: Cobalt (Blue Gene/P) exists nowhere any more, so
 * src/test/lrm/fake-cobalt/bin holds qsub, qstat, qdel and cobalt-mpirun scripts that print Cobalt's
 * output formats and run the job on this machine. The adapter's own code (script, command lines,
 * parsing) runs for real; Cobalt's behaviour is only as faithful as the fake.
 */
class CobaltAdapterTest extends LrmAdapterContract {
    @TempDir
    static Path fakeState;

    private final CobaltAdapter adapter = new CobaltAdapter(new Shell(Map.of(
            "PATH", Path.of("src/test/lrm/fake-cobalt/bin").toAbsolutePath() + ":" + System.getenv("PATH"),
            "FAKE_COBALT_STATE", fakeState.toString()), Duration.ofSeconds(30)), 1);

    @Override
    LrmAdapter adapter() {
        return adapter;
    }

    @Test
    void requestsAreRoundedUpToWholePartitions() {
        CobaltAdapter pset = new CobaltAdapter(new Shell(), 64);
        assertThat(List.of(pset.allocated(1), pset.allocated(64), pset.allocated(65))).containsExactly(64, 64, 128);
        String script = pset.script(new JobRequest("bgp", 3, 4, Duration.ofMinutes(30), List.of("/bin/true"),
                Path.of("/tmp")));
        assertThat(script).contains("cobalt-mpirun -np 64 -mode smp");
    }
}
