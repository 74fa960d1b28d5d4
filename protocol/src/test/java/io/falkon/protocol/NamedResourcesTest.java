package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NamedResourcesTest {

    @Test
    void oneCanonicalFormWhateverTheOrderGivenAndZeroAmountsLeftOut() {
        Map<String, Integer> given = new LinkedHashMap<>();
        given.put("license", 1);
        given.put("gpus", 2);
        given.put("fpga", 0);
        NamedResources r = NamedResources.of(given);
        assertThat(r.asMap()).containsExactly(Map.entry("gpus", 2L), Map.entry("license", 1L));
        assertThat(r.attribute()).isEqualTo("gpus=2,license=1");
        assertThat(r.toString()).isEqualTo("2 gpus, 1 license");
        assertThat(NamedResources.decode(r.encode())).isEqualTo(r);
        assertThat(NamedResources.parseAttribute("license=1,gpus=2")).isEqualTo(r);
        assertThat(NamedResources.of(Map.of("gpus", 0))).isNull();
        assertThat(r.amount("gpus")).isEqualTo(2);
        assertThat(r.amount("tpus")).isZero();
        assertThat(NamedResources.envName("gpus")).isEqualTo("FALKON_RESOURCE_GPUS");
    }

    @Test
    void badNamesAndAmountsAreRefusedNamingThem() {
        assertThatThrownBy(() -> NamedResources.of(Map.of("GPUs", 1))).hasMessageContaining("'GPUs'")
                .hasMessageContaining("[a-z][a-z0-9_]*");
        assertThatThrownBy(() -> NamedResources.of(Map.of("cores", 2))).hasMessageContaining("task's cores");
        assertThatThrownBy(() -> NamedResources.of(Map.of("x".repeat(33), 1))).hasMessageContaining("32");
        assertThatThrownBy(() -> NamedResources.of(Map.of("gpus", -1))).hasMessageContaining("gpus must be 1..");
        assertThatThrownBy(() -> NamedResources.of(Map.of("gpus", 1_000_001))).hasMessageContaining("1000000");
        Map<String, Integer> many = new LinkedHashMap<>();
        for (int i = 0; i < 17; i++) {
            many.put("r" + i, 1);
        }
        assertThatThrownBy(() -> NamedResources.of(many)).hasMessageContaining("at most 16");
        assertThatThrownBy(() -> NamedResources.parseAttribute("gpus")).hasMessageContaining("name=amount");
        assertThatThrownBy(() -> NamedResources.parseAttribute("gpus=x")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> NamedResources.parseAttribute("gpus=1,gpus=2")).hasMessageContaining("twice");
    }

    @Test
    void aFieldNotInTheCanonicalFormIsMalformed() {
        byte[] unsorted = field(new String[]{"license", "gpus"}, new long[]{1, 2});
        assertThatThrownBy(() -> NamedResources.decode(unsorted)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("sorted");
        byte[] twice = field(new String[]{"gpus", "gpus"}, new long[]{1, 2});
        assertThatThrownBy(() -> NamedResources.decode(twice)).hasMessageContaining("each once");
        byte[] zero = field(new String[]{"gpus"}, new long[]{0});
        assertThatThrownBy(() -> NamedResources.decode(zero)).hasMessageContaining("1..");
        byte[] none = field(new String[0], new long[0]);
        assertThatThrownBy(() -> NamedResources.decode(none)).hasMessageContaining("1..16 names");
        byte[] badName = field(new String[]{"GPU"}, new long[]{1});
        assertThatThrownBy(() -> NamedResources.decode(badName)).hasMessageContaining("'GPU'");
        byte[] trailing = java.util.Arrays.copyOf(field(new String[]{"gpus"}, new long[]{1}), 12);
        assertThatThrownBy(() -> NamedResources.decode(trailing)).isInstanceOf(ProtocolException.class);
    }

    @Test
    void theDispatchersScanRefusesAMalformedFieldAndReadsAGoodOne() {
        TaskSpec good = TaskSpec.builder("/bin/true").gpus(2).build();
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(good)).named().asMap()).containsExactly(Map.entry("gpus", 2L));
        assertThat(good.namedResources().amount("gpus")).isEqualTo(2);
        TaskSpec bad = TaskSpec.builder("/bin/true").ext(new ExtField(ExtTags.NAMED_RESOURCES,
                field(new String[]{"b", "a"}, new long[]{1, 1}))).build();
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(bad)).problem()).contains("named resources")
                .contains("sorted");
        assertThat(TaskSpecCodec.scan(TaskSpecCodec.encode(TaskSpec.of("/bin/true"))).named()).isNull();
    }

    private static byte[] field(String[] names, long[] amounts) {
        io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.buffer();
        b.writeShort(names.length);
        for (int i = 0; i < names.length; i++) {
            WireWriter.str(b, names[i]);
            b.writeInt((int) amounts[i]);
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }
}
