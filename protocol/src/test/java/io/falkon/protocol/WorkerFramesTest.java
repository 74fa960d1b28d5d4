package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The persistent-worker framing: its golden vectors, and what it refuses. */
class WorkerFramesTest {
    static final Path DIR = Path.of("src/test/resources/worker-vectors");

    @Test
    void theFilesAreTheVectorsAndDecodeToTheirDescription() throws Exception {
        List<WorkerVectors.Vector> all = WorkerVectors.all();
        try (var files = Files.list(DIR)) {
            assertThat(files.filter(p -> p.toString().endsWith(".bin")).count()).isEqualTo(all.size());
        }
        for (WorkerVectors.Vector v : all) {
            byte[] bytes = Files.readAllBytes(DIR.resolve(v.name() + ".bin"));
            assertThat(bytes).as(v.name()).isEqualTo(v.bytes());
            assertThat(Files.readString(DIR.resolve(v.name() + ".txt"))).isEqualTo(WorkerVectors.describe(v));
            byte[] body = Arrays.copyOfRange(bytes, 4, bytes.length);
            assertThat(((bytes[0] & 0xFF) << 24 | (bytes[1] & 0xFF) << 16 | (bytes[2] & 0xFF) << 8 | bytes[3] & 0xFF))
                    .isEqualTo(body.length);
            Object decoded = v.frame() instanceof WorkerFrames.Request ? WorkerFrames.Request.decode(body)
                    : WorkerFrames.Response.decode(body);
            assertThat(decoded).isEqualTo(v.frame());
        }
    }

    @Test
    void truncatedOrPaddedFramesAreRefusedNamingTheField() {
        byte[] r = new WorkerFrames.Response(1, 0, "out".getBytes(), new byte[0]).encode();
        byte[] body = Arrays.copyOfRange(r, 4, r.length);
        for (int cut = 0; cut < body.length; cut++) {
            byte[] shortBody = Arrays.copyOf(body, cut);
            assertThatThrownBy(() -> WorkerFrames.Response.decode(shortBody)).isInstanceOf(ProtocolException.class)
                    .hasMessageMatching("(taskId|exitCode|stdout|stderr).*");
        }
        byte[] padded = Arrays.copyOf(body, body.length + 1);
        assertThatThrownBy(() -> WorkerFrames.Response.decode(padded)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("worker response");
    }

    @Test
    void aWorkerTaskCarriesItsCommandAndPayloadAndABadOneIsInvalid() {
        TaskSpec spec = TaskSpec.builder("run").worker(List.of("python3", "w.py"), new byte[]{1, 2}).build();
        assertThat(spec.worker()).isEqualTo(new PersistentWorker(List.of("python3", "w.py"), new byte[]{1, 2}));
        assertThat(TaskSpecCodec.decode(TaskSpecCodec.encode(spec)).worker()).isEqualTo(spec.worker());
        assertThat(TaskSpec.of("true").worker()).isNull();
        assertThatThrownBy(() -> TaskSpec.builder("run").worker(List.of(), new byte[0]))
                .hasMessageContaining("needs a program");
        assertThatThrownBy(() -> TaskSpec.builder("run").worker(List.of(""), new byte[0]))
                .hasMessageContaining("program is empty");
        // an empty command list on the wire: the task is invalid, named so, at submission
        TaskSpec bad = TaskSpec.builder("run").ext(new ExtField(ExtTags.WORKER, new byte[8])).build();
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(bad)).problem()).contains("ext WORKER");
        TaskSpec cut = TaskSpec.builder("run").ext(new ExtField(ExtTags.WORKER, new byte[]{0, 0, 0, 1})).build();
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(cut)).problem()).contains("worker");
    }
}
