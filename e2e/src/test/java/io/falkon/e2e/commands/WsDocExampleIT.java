package io.falkon.e2e.commands;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The curl example of docs/ws.md, run exactly as written (from the repository root, against
 * bin/falkon), so that the documentation stays true.
 */
class WsDocExampleIT {
    @TempDir
    Path dir;

    @Test
    void theCurlExampleInTheDocsWorksAsWritten() throws Exception {
        assertThat(new ProcessBuilder("sh", "-c", "command -v curl").start().waitFor())
                .as("curl must be installed to run the documented example (Debian: apt-get install curl)").isZero();
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        String doc = Files.readString(root.resolve("docs/ws.md"));
        int begin = doc.indexOf("<!-- example:begin -->");
        int end = doc.indexOf("<!-- example:end -->");
        assertThat(begin).as("docs/ws.md marks its example").isPositive();
        String block = doc.substring(begin, end);
        String script = block.substring(block.indexOf("```sh") + 5, block.lastIndexOf("```"));
        Path file = dir.resolve("example.sh");
        Files.writeString(file, script);

        ProcessBuilder pb = new ProcessBuilder("bash", file.toString()).directory(root.toFile())
                .redirectErrorStream(true).redirectOutput(dir.resolve("out.txt").toFile());
        pb.environment().put("PORT", Integer.toString(ServiceCommandsTest.freePort()));
        pb.environment().put("WS_PORT", Integer.toString(ServiceCommandsTest.freePort()));
        Cli.asUser(pb, dir); // its own ~/.falkon, where the dispatcher writes the token
        Process p = pb.start();
        boolean finished = p.waitFor(120, TimeUnit.SECONDS);
        String out = Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8);
        if (!finished) {
            p.destroyForcibly();
        }
        assertThat(finished).as("the example finishes; output so far:%n%s", out).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).containsPattern("instance [0-9a-f]{1,16}-[0-9a-f]{32}")
                .contains("<f:accepted>2</f:accepted><f:id>0</f:id><f:id>1</f:id>")
                .contains("<f:stdout>hello from falkon\n</f:stdout>")
                .contains("exitCode=\"3\"").contains("<f:stdout>Linux\n</f:stdout>")
                .contains("<f:outstanding>0</f:outstanding>")
                .contains("<f:completed>2</f:completed>").contains("without the token: HTTP 401")
                .contains("<f:cancelled>0</f:cancelled>");
    }
}
