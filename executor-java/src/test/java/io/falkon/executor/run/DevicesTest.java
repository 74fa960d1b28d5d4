package io.falkon.executor.run;

import io.falkon.protocol.NamedResources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DevicesTest {

    @Test
    void theOptionGivesDevicesOrACountAndRefusesWhatItCannotReadNamingIt() {
        assertThat(ResourceOffer.parse("gpus=0,1,2").devices()).containsExactly("0", "1", "2");
        assertThat(ResourceOffer.parse("gpus=[3]").devices()).containsExactly("3");
        assertThat(ResourceOffer.parse("gpus=0,").devices()).containsExactly("0");
        assertThat(ResourceOffer.parse("gpus=GPU-5e0f,GPU-77aa").amount()).isEqualTo(2);
        ResourceOffer license = ResourceOffer.parse("license=4");
        assertThat(license.devices()).isNull();
        assertThat(license.amount()).isEqualTo(4);
        assertThat(ResourceOffer.parse("gpus=0").amount()).as("gpus=0: none").isZero();
        assertThatThrownBy(() -> ResourceOffer.parse("gpus")).hasMessageContaining("NAME=INDICES");
        assertThatThrownBy(() -> ResourceOffer.parse("GPUs=1")).hasMessageContaining("[a-z]");
        assertThatThrownBy(() -> ResourceOffer.parse("gpus=x")).hasMessageContaining("gpus=[x]");
        assertThatThrownBy(() -> ResourceOffer.parse("gpus=0,0")).hasMessageContaining("twice");
        assertThatThrownBy(() -> ResourceOffer.parse("gpus=0,a b")).hasMessageContaining("'a b'");
        assertThatThrownBy(() -> ResourceOffer.parse("memory=4")).hasMessageContaining("not a named resource");
    }

    @Test
    void anInheritedVisibleDevicesVariableIsTheSetNeverWidened() {
        assertThat(ResourceOffer.detectGpus(Map.of("CUDA_VISIBLE_DEVICES", "2,3")).devices()).containsExactly("2", "3");
        ResourceOffer amd = ResourceOffer.detectGpus(Map.of("ROCR_VISIBLE_DEVICES", "1"));
        assertThat(amd.devices()).containsExactly("1");
        assertThat(amd.vendor()).isEqualTo(ResourceOffer.Vendor.AMD);
        assertThat(ResourceOffer.detectGpus(Map.of("CUDA_VISIBLE_DEVICES", ""))).as("empty: none").isNull();
        assertThat(ResourceOffer.detectGpus(Map.of("CUDA_VISIBLE_DEVICES", "-1"))).isNull();
        assertThat(ResourceOffer.detectGpus(Map.of("CUDA_VISIBLE_DEVICES", "NoDevFiles"))).isNull();
        assertThat(ResourceOffer.detectGpus(Map.of("CUDA_VISIBLE_DEVICES", "0,-1,1")).devices())
                .as("CUDA stops at the first that hides the rest").containsExactly("0");
    }

    /**
     * The vendors' tools are looked for on PATH before anything is started. FAKE rocm-smi: this
     * machine has no GPU, so a script in its place prints the tool's lines; the finding and the
     * parsing are what is tested.
     */
    @Test
    void aVendorsToolIsFoundOnThePathAndOnlyAnExecutableOneCounts(@TempDir Path dir) throws IOException {
        Path none = Files.createDirectory(dir.resolve("no-tools"));
        Path tools = Files.createDirectory(dir.resolve("tools"));
        Path rocm = Files.writeString(tools.resolve("rocm-smi"), "#!/bin/sh\necho 'GPU[0]\t\t: Device ID: 0x740f'\n"
                + "echo 'GPU[1]\t\t: Device ID: 0x740f'\n");
        String path = none + ":" + tools;
        assertThat(ResourceOffer.onPath(path, "rocm-smi")).as("not executable: not the tool").isNull();
        assertThat(ResourceOffer.detectGpus(Map.of("PATH", path))).isNull();

        Files.setPosixFilePermissions(rocm, PosixFilePermissions.fromString("rwx------"));
        assertThat(ResourceOffer.onPath(path, "rocm-smi")).isEqualTo(rocm);
        assertThat(ResourceOffer.onPath(path, "nvidia-smi")).isNull();
        ResourceOffer amd = ResourceOffer.detectGpus(Map.of("PATH", path));
        assertThat(amd.devices()).containsExactly("0", "1");
        assertThat(amd.vendor()).isEqualTo(ResourceOffer.Vendor.AMD);
        assertThat(ResourceOffer.detectGpus(Map.of("PATH", none.toString()))).as("nothing on PATH").isNull();
    }

    @Test
    void eachDeviceGoesToOneTaskAtATimeAndASlotTakesItsOwnAgain() {
        Devices d = Devices.of(List.of(ResourceOffer.parse("gpus=0,1,2"), ResourceOffer.parse("license=1")), 2);
        assertThat(d.offered().attribute()).isEqualTo("gpus=3,license=1");
        NamedResources two = NamedResources.of(Map.of("gpus", 2, "license", 1));
        NamedResources one = NamedResources.of(Map.of("gpus", 1));
        Devices.Grant a = d.take(two, 0);
        assertThat(a.env()).containsEntry("CUDA_VISIBLE_DEVICES", "0,1").containsEntry("FALKON_RESOURCE_GPUS", "0,1")
                .containsEntry("FALKON_RESOURCE_LICENSE", "1");
        assertThat(d.free(two)).as("one GPU and no licence left").isFalse();
        assertThat(d.free(one)).isTrue();
        Devices.Grant b = d.take(one, 1);
        assertThat(b.env()).containsEntry("CUDA_VISIBLE_DEVICES", "2");
        assertThat(d.free(one)).isFalse();
        d.give(a);
        d.give(b);
        assertThat(d.take(one, 1).env()).as("slot 1's device again").containsEntry("CUDA_VISIBLE_DEVICES", "2");
        assertThat(d.take(null, 0).env()).as("a task asking none is shown none")
                .containsEntry("CUDA_VISIBLE_DEVICES", "").doesNotContainKey("FALKON_RESOURCE_GPUS");
        assertThat(d.problem(NamedResources.of(Map.of("gpus", 4)))).contains("needs 4 gpus")
                .contains("offers 3 gpus, 1 license");
        assertThat(Devices.of(List.of(ResourceOffer.parse("gpus=0")), 1)).as("offering nothing").isNull();
    }

    @Test
    void rocmDevicesAreHandedOverInRocmsTwoVariables() {
        Devices d = Devices.of(List.of(ResourceOffer.detectGpus(Map.of("ROCR_VISIBLE_DEVICES", "4,6"))), 1);
        Map<String, String> env = d.take(NamedResources.of(Map.of("gpus", 2)), 0).env();
        assertThat(env).containsEntry("ROCR_VISIBLE_DEVICES", "4,6").containsEntry("HIP_VISIBLE_DEVICES", "0,1")
                .doesNotContainKey("CUDA_VISIBLE_DEVICES");
    }
}
