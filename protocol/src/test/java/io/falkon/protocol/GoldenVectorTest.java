package io.falkon.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Every vector file decodes to its description and re-encodes to the identical bytes. */
class GoldenVectorTest {
    static final Path DIR = Path.of("src/test/resources/vectors");

    static List<Path> binFiles() throws IOException {
        try (Stream<Path> s = Files.list(DIR)) {
            return s.filter(p -> p.toString().endsWith(".bin")).sorted().collect(Collectors.toList());
        }
    }

    static String withoutComments(String text) {
        return text.lines().filter(l -> !l.startsWith("#")).map(l -> l + "\n").collect(Collectors.joining());
    }

    @TestFactory
    Stream<DynamicTest> eachVectorDecodesToItsDescriptionAndReencodesIdentically() throws IOException {
        return binFiles().stream().map(bin -> DynamicTest.dynamicTest(bin.getFileName().toString(), () -> {
            byte[] bytes = Files.readAllBytes(bin);
            String txt = Files.readString(Path.of(bin.toString().replace(".bin", ".txt")));
            ByteBuf in = Unpooled.wrappedBuffer(bytes);
            int length = in.readInt();
            assertThat(length).as("length prefix").isEqualTo(bytes.length - 4);
            Message m = MessageCodec.decode(in);
            assertThat(MessageDump.dump(m)).isEqualTo(withoutComments(txt));
            assertThat(GoldenVectors.frame(m)).isEqualTo(bytes);
        }));
    }

    @Test
    void theFilesAreExactlyTheGeneratedVectors() throws IOException {
        List<GoldenVectors.Vector> all = GoldenVectors.all();
        assertThat(binFiles()).hasSize(all.size());
        for (GoldenVectors.Vector v : all) {
            assertThat(Files.readAllBytes(DIR.resolve(v.name() + ".bin"))).as(v.name())
                    .isEqualTo(GoldenVectors.frame(v.message()));
            assertThat(Files.readString(DIR.resolve(v.name() + ".txt"))).as(v.name())
                    .isEqualTo(GoldenVectors.describe(v));
        }
    }

    @Test
    void everyMessageTypeHasAVector() {
        assertThat(GoldenVectors.all().stream().map(v -> v.message().type()).collect(Collectors.toSet()))
                .containsExactlyInAnyOrder(MessageType.values());
    }
}
