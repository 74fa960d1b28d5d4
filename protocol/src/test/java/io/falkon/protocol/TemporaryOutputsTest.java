package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The TEMPORARY extension: which outputs stay on the executor, as the dispatcher and executors read it. */
class TemporaryOutputsTest {
    private static final List<TaskOutput> OUTPUTS = List.of(new TaskOutput("p.fits", "proj/p", true),
            new TaskOutput("log", "logs/p"), new TaskOutput("a.fits", "proj/a", true));

    @Test
    void temporaryOutputsAreMarkedByTheirPlaceAndEveryReaderAgrees() {
        byte[] blob = TaskSpecCodec.encode(TaskSpec.builder("mProjectPP").outputs(OUTPUTS).build());
        assertThat(TaskSpecCodec.decode(blob).outputs()).isEqualTo(OUTPUTS);
        TaskSpecCodec.Scan scan = TaskSpecCodec.scan(blob);
        assertThat(scan.valid()).isTrue();
        assertThat(scan.outputIds()).containsExactly("proj/p", "logs/p", "proj/a");
        assertThat(scan.temporary()).containsExactly(true, false, true);
    }

    @Test
    void withoutTemporaryOutputsTheFieldIsAbsentAndNothingIsMarked() {
        TaskSpec spec = TaskSpec.builder("cp").outputs(List.of(new TaskOutput("x", "x"))).build();
        assertThat(spec.ext()).extracting(ExtField::tag).containsExactly(ExtTags.OUTPUTS);
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(spec)).temporary()).isNull();
    }

    @Test
    void anIndexPastTheOutputsOrOutOfOrderMakesTheTaskInvalid() {
        TaskSpec.Builder b = TaskSpec.builder("cp").outputs(List.of(new TaskOutput("x", "x")));
        byte[] past = TaskSpecCodec.encode(b.build().toBuilder().ext(new ExtField(ExtTags.TEMPORARY,
                new byte[]{0, 1, 0, 1})).build());
        assertThat(TaskSpecCodec.scan(past).problem()).contains("temporary[0]").contains("does not exist");
        TaskSpec two = TaskSpec.builder("cp").outputs(List.of(new TaskOutput("x", "x"), new TaskOutput("y", "y")))
                .build();
        byte[] repeated = TaskSpecCodec.encode(two.toBuilder().ext(new ExtField(ExtTags.TEMPORARY,
                new byte[]{0, 2, 0, 1, 0, 1})).build());
        assertThat(TaskSpecCodec.scan(repeated).problem()).contains("ascend");
        byte[] alone = TaskSpecCodec.encode(TaskSpec.builder("true").ext(new ExtField(ExtTags.TEMPORARY,
                new byte[]{0, 1, 0, 0})).build());
        assertThat(TaskSpecCodec.scan(alone).valid()).as("no outputs to mark").isFalse();
    }

    @Test
    void archivedOutputsAreMarkedTheSameWayAndAnOutputMarkedBothIsRefused() {
        List<TaskOutput> outputs = List.of(new TaskOutput("a", "a", false, true), new TaskOutput("b", "b", true, false));
        byte[] blob = TaskSpecCodec.encode(TaskSpec.builder("x").outputs(outputs).build());
        assertThat(TaskSpecCodec.decode(blob).outputs()).isEqualTo(outputs);
        assertThat(TaskSpecCodec.scan(blob).valid()).isTrue();
        TaskSpec one = TaskSpec.builder("x").outputs(List.of(new TaskOutput("a", "a", true))).build();
        byte[] both = TaskSpecCodec.encode(one.toBuilder().ext(new ExtField(ExtTags.ARCHIVE, new byte[]{0, 1, 0, 0}))
                .build());
        assertThat(TaskSpecCodec.scan(both).problem()).contains("both temporary and archived");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new TaskOutput("a", "a", true, true))
                .hasMessageContaining("not both");
    }
}
