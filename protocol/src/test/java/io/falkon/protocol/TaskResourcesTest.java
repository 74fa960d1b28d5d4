package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The RESOURCES extension: what a task states of one executor, as the dispatcher and executors read it. */
class TaskResourcesTest {

    @Test
    void statedCoresAndMemoryTravelInTheSpecAndEveryReaderAgrees() {
        TaskSpec spec = TaskSpec.builder("xz", "-T4").resources(4, 2048).priority(3).build();
        byte[] blob = TaskSpecCodec.encode(spec);
        TaskSpec back = TaskSpecCodec.decode(blob);
        assertThat(back.cores()).isEqualTo(4);
        assertThat(back.memoryMiB()).isEqualTo(2048);
        TaskSpecCodec.Scan scan = TaskSpecCodec.scan(blob);
        assertThat(scan.valid()).isTrue();
        assertThat(scan.cores()).isEqualTo(4);
        assertThat(scan.memoryMiB()).isEqualTo(2048);
        assertThat(TaskSpecCodec.cores(blob)).isEqualTo(4);
    }

    @Test
    void aTaskThatStatesNothingTakesOneSlotAndNoMemory() {
        byte[] blob = TaskSpecCodec.encode(TaskSpec.of("/bin/true"));
        assertThat(TaskSpecCodec.scan(blob).cores()).isEqualTo(1);
        assertThat(TaskSpecCodec.scan(blob).memoryMiB()).isZero();
        assertThat(TaskSpecCodec.cores(blob)).isEqualTo(1);
        assertThat(TaskSpecCodec.cores(new byte[]{1, 2, 3})).as("malformed: one slot").isEqualTo(1);
        // stating one core is still a statement (its own CPU on a pinned executor), and the last one counts
        TaskSpec one = TaskSpec.builder("/bin/true").resources(3, 0).resources(1, 0).build();
        assertThat(one.ext()).extracting(ExtField::tag).containsExactly(ExtTags.RESOURCES);
        assertThat(one.cores()).isEqualTo(1);
    }

    @Test
    void outOfRangeValuesAreRefusedNamingTheField() {
        assertThatThrownBy(() -> TaskSpec.builder("x").resources(0, 0)).hasMessageContaining("cores must be 1..65536, got 0");
        assertThatThrownBy(() -> TaskSpec.builder("x").resources(70_000, 0)).hasMessageContaining("cores");
        assertThatThrownBy(() -> TaskSpec.builder("x").resources(1, -1)).hasMessageContaining("memory must be");
        assertThatThrownBy(() -> TaskSpec.builder("x").resources(1, 1L << 32)).hasMessageContaining("memory must be");
    }

    @Test
    void aMalformedResourcesFieldMakesTheTaskInvalid() {
        TaskSpec wrongLength = new TaskSpec(List.of("x"), java.util.Map.of(), "", 0,
                List.of(new ExtField(ExtTags.RESOURCES, new byte[]{0, 0, 0, 2})));
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(wrongLength)).problem())
                .isEqualTo("ext RESOURCES must hold eight bytes (cores:u32 memoryMiB:u32)");
        TaskSpec zeroCores = new TaskSpec(List.of("x"), java.util.Map.of(), "", 0,
                List.of(new ExtField(ExtTags.RESOURCES, new byte[8])));
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(zeroCores)).problem())
                .isEqualTo("ext RESOURCES: cores must be 1..65536, got 0");
    }

    @Test
    void statedDiskTravelsInAFieldOfItsOwnAndZeroStatesNothing() {
        byte[] blob = TaskSpecCodec.encode(TaskSpec.builder("x").resources(2, 64).disk(5000).build());
        assertThat(TaskSpecCodec.decode(blob).diskMiB()).isEqualTo(5000);
        assertThat(TaskSpecCodec.scan(blob).diskMiB()).isEqualTo(5000);
        assertThat(TaskSpecCodec.scan(blob).memoryMiB()).as("RESOURCES unchanged beside it").isEqualTo(64);
        assertThat(TaskSpecCodec.cores(blob)).isEqualTo(2);
        TaskSpec none = TaskSpec.builder("x").disk(700).disk(0).build();
        assertThat(none.ext()).as("0 is not stated: no field").isEmpty();
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(none)).diskMiB()).isZero();
        assertThatThrownBy(() -> TaskSpec.builder("x").disk(-1)).hasMessageContaining("disk must be 0..");
        assertThatThrownBy(() -> TaskSpec.builder("x").disk(1L << 32)).hasMessageContaining("disk must be 0..");
        TaskSpec wrongLength = new TaskSpec(List.of("x"), java.util.Map.of(), "", 0,
                List.of(new ExtField(ExtTags.DISK, new byte[]{0, 2})));
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(wrongLength)).problem())
                .isEqualTo("ext DISK must hold four bytes (diskMiB:u32)");
    }
}
