package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The canonical form of object ids, output paths and input names ({@link ObjectId}), as a property
 * over random byte strings, and the golden file {@code names.txt} that holds the C executor
 * ({@code tests/test_names.c}) and the Python package ({@code tests/test_names.py}) to the same
 * accept/refuse answer for each of its byte strings.
 */
class ObjectIdTest {
    /** The golden file: {@code KIND HEX VERDICT} per line ("-": no bytes); regenerate with -Dfalkon.golden.write=true. */
    static final Path GOLDEN = Path.of("src/test/resources/names.txt");
    private static final long SEED = 53;
    private static final int RANDOM_CASES = 3000;

    @Test
    void canonicalIdsAreAcceptedAndEveryOtherFormRefusedWithItsReason() {
        for (String ok : List.of("a", "results/r-1", "a.b/c..d/.hidden", "naïve/日本/😀", "with space/x y",
                "x".repeat(255) + "/y", "a\\b")) {
            assertThat(ObjectId.problem(ok)).as(ok).isNull();
        }
        assertThat(ObjectId.problem("")).contains("must not be empty");
        assertThat(ObjectId.problem("/etc/passwd")).contains("must be relative");
        assertThat(ObjectId.problem("res/q/../x")).contains("'.' or '..' segment");
        assertThat(ObjectId.problem("./x")).contains("'.' or '..' segment");
        assertThat(ObjectId.problem("a//b")).contains("empty segment");
        assertThat(ObjectId.problem("a/")).contains("empty segment");
        assertThat(ObjectId.problem("res/x\u0000-other")).contains("control characters").contains("U+0000");
        assertThat(ObjectId.problem("k\nevil")).contains("control characters").contains("U+000A");
        assertThat(ObjectId.problem("k\u0085")).as("a C1 control (NEL)").contains("control characters");
        assertThat(ObjectId.problem("x".repeat(256))).contains("segment over 255 bytes");
        assertThat(ObjectId.problem("é".repeat(128))).as("256 bytes in 128 characters").contains("over 255 bytes");
        assertThat(ObjectId.problem(("x".repeat(200) + "/").repeat(6) + "y")).contains("at most 1024 bytes");
        assertThat(ObjectId.problem("\ud800x")).contains("valid UTF-8");
        assertThat(ObjectId.problem(new byte[]{'a', (byte) 0xff})).contains("valid UTF-8");
        assertThat(ObjectId.problem(new byte[]{(byte) 0xc0, (byte) 0xaf})).as("an overlong '/'").contains("valid UTF-8");
    }

    @Test
    void anOutputPathMayBeAbsoluteButIsOtherwiseAsCanonical() {
        assertThat(ObjectId.pathProblem("/home/me/out.txt")).isNull();
        assertThat(ObjectId.pathProblem("sub/f")).isNull();
        assertThat(ObjectId.pathProblem("/")).contains("empty segment");
        assertThat(ObjectId.pathProblem("//x")).contains("empty segment");
        assertThat(ObjectId.pathProblem("/tmp/../etc/x")).contains("'..'");
        assertThat(ObjectId.pathProblem("../x")).contains("'..'");
        assertThat(ObjectId.pathProblem("a\u0000b")).contains("control");
        assertThat(ObjectId.pathProblem("/" + "d/".repeat(2047) + "f")).as("4096 bytes").isNull();
        assertThat(ObjectId.pathProblem("/" + "d/".repeat(2048) + "f")).contains("at most 4096 bytes");
    }

    @Test
    void anInputNameIsOneSegmentOrOneSegmentAndASlash() {
        for (String ok : List.of("", "x.fits", "diffs/", "..x", ".hidden")) {
            assertThat(ObjectId.inputNameProblem(ok)).as(ok).isNull();
        }
        for (String bad : List.of("a/b", "/", ".", "..", "../", "x\ny", "a//")) {
            assertThat(ObjectId.inputNameProblem(bad)).as(bad).isNotNull();
        }
    }

    /** OUTPUTS with one output of this path and id, as bytes: what no TaskOutput would let one build. */
    private static byte[] outputs(byte[] path, byte[] id) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(10 + path.length + id.length);
        b.putShort((short) 1).putInt(path.length).put(path).putInt(id.length).put(id);
        return b.array();
    }

    @Test
    void theDecodersEveryExecutorUsesRefuseWhatTheRuleRefuses() {
        byte[] ok = "o.txt".getBytes(StandardCharsets.UTF_8);
        assertThat(DataCodec.decodeOutputs(outputs(ok, "res/x".getBytes(StandardCharsets.UTF_8)))).hasSize(1);
        for (byte[] id : List.of("res/x\u0000-other".getBytes(StandardCharsets.UTF_8),
                "res/q/../x".getBytes(StandardCharsets.UTF_8), new byte[]{'r', (byte) 0xff})) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> DataCodec.decodeOutputs(outputs(ok, id)))
                    .isInstanceOf(ProtocolException.class).hasMessageContaining("outputs[0]").hasMessageContaining("id");
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> DataCodec.decodeOutputs(
                outputs("../o".getBytes(StandardCharsets.UTF_8), ok))).hasMessageContaining("outputs[0]: path");
    }

    @Test
    void overRandomByteStringsTheRuleIsExactlyTheModel() {
        Random r = new Random(SEED + 1);
        int accepted = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] b = randomName(r);
            for (String kind : List.of("id", "path", "name")) {
                boolean ok = verdict(kind, b);
                assertThat(ok).as("%s %s", kind, HexFormat.of().formatHex(b)).isEqualTo(model(kind, b));
                accepted += ok ? 1 : 0;
            }
        }
        assertThat(accepted).as("the generator reaches both answers").isBetween(2_000, 50_000);
    }

    @Test
    void theGoldenFileIsWhatTheGeneratorMakesAndJavaGivesEachLineItsAnswer() throws IOException {
        String expected = golden();
        if (Boolean.getBoolean("falkon.golden.write")) {
            Files.writeString(GOLDEN, expected);
        }
        assertThat(Files.readString(GOLDEN)).as("%s is stale: rerun with -Dfalkon.golden.write=true", GOLDEN)
                .isEqualTo(expected);
        int lines = 0;
        for (String line : expected.lines().filter(l -> !l.startsWith("#")).toList()) {
            String[] f = line.split(" ");
            byte[] b = f[1].equals("-") ? new byte[0] : HexFormat.of().parseHex(f[1]);
            assertThat(verdict(f[0], b) ? "ok" : "refused").as(line).isEqualTo(f[2]);
            lines++;
        }
        assertThat(lines).isGreaterThan(RANDOM_CASES);
    }

    /** Java's answer. */
    static boolean verdict(String kind, byte[] b) {
        return switch (kind) {
            case "id" -> ObjectId.problem(b) == null;
            case "path" -> ObjectId.pathProblem(b) == null;
            case "name" -> {
                String s = ObjectId.decode(b);
                yield s != null && ObjectId.inputNameProblem(s) == null;
            }
            default -> throw new IllegalArgumentException(kind);
        };
    }

    private static final Pattern CONTROL = Pattern.compile("\\p{Cc}");

    /** The rule written a second way, from docs/data-diffusion.md's words, for the property above. */
    static boolean model(String kind, byte[] b) {
        String s = ObjectId.decode(b);
        if (s == null || CONTROL.matcher(s).find()) {
            return false;
        }
        if (kind.equals("name")) {
            String plain = s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
            return s.isEmpty() || (!plain.contains("/") && segmentOk(plain));
        }
        int max = kind.equals("id") ? 1024 : 4096;
        if (s.isEmpty() || b.length > max) {
            return false;
        }
        String rest = s;
        if (s.startsWith("/")) {
            if (kind.equals("id")) {
                return false;
            }
            rest = s.substring(1);
        }
        for (String seg : rest.split("/", -1)) {
            if (!segmentOk(seg)) {
                return false;
            }
        }
        return true;
    }

    private static boolean segmentOk(String seg) {
        return !seg.isEmpty() && !seg.equals(".") && !seg.equals("..")
                && seg.getBytes(StandardCharsets.UTF_8).length <= 255;
    }

    /** Pieces random names are made of: plain bytes, separators, dots, controls, UTF-8 good and bad. */
    private static final byte[][] PIECES = {
            {'a'}, {'b'}, {'x', 'y'}, {'/'}, {'/'}, {'.'}, {'.'}, {'.', '.'}, {' '}, {'\\'}, {'-'},
            {0}, {'\n'}, {'\r'}, {0x1f}, {0x7f}, {(byte) 0xc2, (byte) 0x85}, {(byte) 0xc2, (byte) 0xa0},
            {(byte) 0xc3, (byte) 0xa9}, {(byte) 0xe6, (byte) 0x97, (byte) 0xa5},
            {(byte) 0xf0, (byte) 0x9f, (byte) 0x98, (byte) 0x80}, {(byte) 0xff}, {(byte) 0xc0, (byte) 0xaf},
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, {(byte) 0xe6, (byte) 0x97}, {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
    };

    static byte[] randomName(Random r) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int shape = r.nextInt(10);
        if (shape == 0) { // near the segment and length bounds
            int seg = 250 + r.nextInt(8);
            int segs = 1 + r.nextInt(6);
            for (int s = 0; s < segs; s++) {
                if (s > 0 || r.nextInt(4) == 0) {
                    out.write('/');
                }
                for (int k = 0; k < seg; k++) {
                    out.write('a' + r.nextInt(3));
                }
            }
            return out.toByteArray();
        }
        int n = r.nextInt(12);
        for (int k = 0; k < n; k++) {
            byte[] p = PIECES[r.nextInt(PIECES.length)];
            out.write(p, 0, p.length);
        }
        return out.toByteArray();
    }

    /** The golden file's text: hand-picked edge cases, then random ones, each with the model's answer. */
    static String golden() {
        List<byte[]> cases = new ArrayList<>();
        for (String s : List.of("a", "a/b", "/a", "a/", "a//b", ".", "..", "./a", "a/.", "a/../b", "..a", "a..",
                ".hidden/x", "diffs/", "/", "")) {
            cases.add(s.getBytes(StandardCharsets.UTF_8));
        }
        cases.add(("x".repeat(255)).getBytes(StandardCharsets.UTF_8));
        cases.add(("x".repeat(256)).getBytes(StandardCharsets.UTF_8));
        cases.add(("y".repeat(255) + "/").repeat(4).concat("z".repeat(4)).getBytes(StandardCharsets.UTF_8));
        cases.add(("y".repeat(255) + "/").repeat(4).concat("z".repeat(3)).getBytes(StandardCharsets.UTF_8));
        cases.add(("/" + "d/".repeat(2047) + "f").getBytes(StandardCharsets.UTF_8));
        cases.add(("/" + "d/".repeat(2048) + "f").getBytes(StandardCharsets.UTF_8));
        Random r = new Random(SEED);
        for (int i = 0; i < RANDOM_CASES; i++) {
            cases.add(randomName(r));
        }
        StringBuilder sb = new StringBuilder("# ObjectIdTest.golden(): KIND HEX ANSWER (ok or refused) for the same byte string\n"
                + "# as an object id, an output path and an input name; checked by Java, C and Python.\n");
        for (byte[] b : cases) {
            String hex = b.length == 0 ? "-" : HexFormat.of().formatHex(b);
            for (String kind : List.of("id", "path", "name")) {
                sb.append(kind).append(' ').append(hex).append(' ').append(model(kind, b) ? "ok" : "refused").append('\n');
            }
        }
        return sb.toString();
    }
}
