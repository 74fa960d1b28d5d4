package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The READ_ONLY extension: which inputs a task only reads, as the dispatcher and executors read it. */
class ReadOnlyInputsTest {
    private static final List<TaskInput> INPUTS = List.of(
            TaskInput.of("raw/t1.fits", "raw/t1.fits").asReadOnly(),
            TaskInput.of("region.hdr", "region.hdr"),
            new TaskInput("proj/t1.fits", "proj/t1.fits", 10, "", TaskInput.AS_STORED, "images/", true));

    @Test
    void readOnlyInputsAreMarkedByTheirPlaceAndEveryReaderAgrees() {
        TaskSpec spec = TaskSpec.builder("mProjectPP").inputs(INPUTS).build();
        assertThat(spec.ext()).extracting(ExtField::tag).containsExactly(ExtTags.INPUTS, ExtTags.READ_ONLY);
        assertThat(spec.ext().get(1).value()).containsExactly(0, 2, 0, 0, 0, 2);
        byte[] blob = TaskSpecCodec.encode(spec);
        assertThat(TaskSpecCodec.decode(blob).inputs()).isEqualTo(INPUTS);
        TaskSpecCodec.Scan scan = TaskSpecCodec.scan(blob);
        assertThat(scan.valid()).isTrue();
        assertThat(scan.inputIds()).containsExactly("raw/t1.fits", "region.hdr", "proj/t1.fits");
    }

    @Test
    void withoutReadOnlyInputsTheFieldIsAbsent() {
        TaskSpec spec = TaskSpec.builder("cat").inputs(List.of(TaskInput.of("x", "x"))).build();
        assertThat(spec.ext()).extracting(ExtField::tag).containsExactly(ExtTags.INPUTS);
        assertThat(spec.inputs()).extracting(TaskInput::readOnly).containsExactly(false);
    }

    @Test
    void anIndexPastTheInputsOrOutOfOrderMakesTheTaskInvalid() {
        TaskSpec one = TaskSpec.builder("cat").inputs(List.of(TaskInput.of("x", "x"))).build();
        byte[] past = TaskSpecCodec.encode(one.toBuilder().ext(new ExtField(ExtTags.READ_ONLY,
                new byte[]{0, 1, 0, 1})).build());
        assertThat(TaskSpecCodec.scan(past).problem()).contains("readOnly[0]").contains("input 1 does not exist");
        TaskSpec two = TaskSpec.builder("cat").inputs(List.of(TaskInput.of("x", "x"), TaskInput.of("y", "y"))).build();
        byte[] repeated = TaskSpecCodec.encode(two.toBuilder().ext(new ExtField(ExtTags.READ_ONLY,
                new byte[]{0, 2, 0, 1, 0, 1})).build());
        assertThat(TaskSpecCodec.scan(repeated).problem()).contains("input indexes must ascend");
        byte[] alone = TaskSpecCodec.encode(TaskSpec.builder("true").ext(new ExtField(ExtTags.READ_ONLY,
                new byte[]{0, 1, 0, 0})).build());
        assertThat(TaskSpecCodec.scan(alone).problem()).as("no inputs to mark").contains("does not exist");
    }

    @Test
    void anOutputAtTheReadOnlyInputsPathIsRefusedUnlessTheTaskWorksElsewhere() {
        List<TaskInput> inputs = List.of(TaskInput.of("data/a.txt", "data/a.txt").asReadOnly());
        List<TaskOutput> outputs = List.of(new TaskOutput("b.txt", "out/b"), new TaskOutput("a.txt", "out/a"));
        byte[] clash = TaskSpecCodec.encode(TaskSpec.builder("sort", "-o", "a.txt", "a.txt").inputs(inputs)
                .outputs(outputs).build());
        assertThat(TaskSpecCodec.scan(clash).problem())
                .contains("outputs[1] 'a.txt' is the path of read-only inputs[0]");
        assertThat(DataCodec.readOnlyClash(inputs, outputs, false)).isNotNull();
        // the same output path in a working directory of the task's own is another file
        byte[] elsewhere = TaskSpecCodec.encode(TaskSpec.builder("sort", "-o", "a.txt", "a.txt").workDir("/tmp/w")
                .inputs(inputs).outputs(outputs).build());
        assertThat(TaskSpecCodec.scan(elsewhere).valid()).isTrue();
        // and a copy of its own may be written over, as before
        byte[] copy = TaskSpecCodec.encode(TaskSpec.builder("sort", "-o", "a.txt", "a.txt")
                .inputs(List.of(TaskInput.of("data/a.txt", "data/a.txt"))).outputs(outputs).build());
        assertThat(TaskSpecCodec.scan(copy).valid()).isTrue();
    }
}
