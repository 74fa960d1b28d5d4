package io.falkon.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ShellLineTest {
    @Test
    void plainWordsRunDirectlyAndKeepTheirLine() {
        TaskSpec t = ShellLine.task("  /bin/true  ").build();
        assertThat(t.argv()).containsExactly("/bin/true");
        assertThat(ShellLine.of(t)).isEqualTo("  /bin/true  ");
        assertThat(ShellLine.direct("mProject -X tile_01.fits out/p.fits 0.5 key=value a,b 50% user@host ^"))
                .containsExactly("mProject", "-X", "tile_01.fits", "out/p.fits", "0.5", "key=value", "a,b", "50%",
                        "user@host", "^");
        assertThat(ShellLine.direct("sleep\t1")).containsExactly("sleep", "1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"echo hi > f", "a | b", "a; b", "a && b", "a &", "echo $HOME", "echo `date`", "ls *.txt",
            "ls file?", "cat ~/x", "echo 'q'", "echo \"q\"", "echo a\\ b", "x # comment", "(cd /; ls)", "{ a; }",
            "FOO=1 env", "cd /tmp", "echo hi", "true", "exit 3", "export A=1", "if", "ls [ab]", "echo é",
            "printf %s x", "test -f x", "a<b", "a>b", "!", "time ls", "ls\nrm"})
    void anythingTheShellWouldInterpretGoesThroughIt(String line) {
        assertThat(ShellLine.direct(line)).as(line).isNull();
        TaskSpec t = ShellLine.task(line).build();
        assertThat(t.argv()).containsExactly("/bin/sh", "-c", line);
        assertThat(ShellLine.of(t)).isNull();
    }

    @Test
    void throughShellRunsTheLineKeepingEverythingElse() {
        TaskSpec direct = ShellLine.task("prog a b").env("K", "v").workDir("/w").retries(2).build();
        TaskSpec sh = ShellLine.throughShell(direct);
        assertThat(sh.argv()).isEqualTo(List.of("/bin/sh", "-c", "prog a b"));
        assertThat(sh.env()).containsEntry("K", "v");
        assertThat(sh.workDir()).isEqualTo("/w");
        assertThat(sh.retries()).isEqualTo(2);
        assertThat(ShellLine.of(sh)).isNull();
    }
}
