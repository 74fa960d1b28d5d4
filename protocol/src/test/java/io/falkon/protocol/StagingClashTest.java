package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Inputs are staged concurrently into one sandbox, so no two may land under one file name. */
class StagingClashTest {
    private static TaskInput input(String id, String name) {
        return new TaskInput(id, id, -1, "", TaskInput.AS_STORED, name);
    }

    private static String problem(TaskInput... inputs) {
        return TaskSpecCodec.validate(TaskSpecCodec.encode(TaskSpec.builder("/bin/true").inputs(List.of(inputs))
                .build()));
    }

    @Test
    void twoInputsOfOneFileNameAreRefusedNamingBoth() {
        assertThat(problem(input("night1/x.fits", ""), input("y", ""), input("night2/x.fits", "")))
                .isEqualTo("inputs[2] would be staged as 'x.fits', like inputs[0]: give one of them another name");
        assertThatThrownBy(() -> input("a/..", "")).as("no id has a '..' segment, so none stages as '..'")
                .hasMessageContaining("'.' or '..' segment");
        assertThat(problem(input("a", "same"), input("b", "same"))).contains("as 'same'");
    }

    @Test
    void inputsNamedWithADirectoryGoIntoItUnderTheirOwnNames() {
        assertThat(input("night1/x.fits", "diffs/").fileName()).isEqualTo("diffs/x.fits");
        assertThat(input("night1/x.fits", "diffs/").directory()).isEqualTo("diffs");
        assertThat(input("night1/x.fits", "").directory()).isNull();
        assertThat(problem(input("d/1.fits", "diffs/"), input("d/2.fits", "diffs/"), input("t", "table"))).isNull();
        assertThat(problem(input("a/1.fits", "diffs/"), input("b/1.fits", "diffs/")))
                .contains("inputs[1] would be staged as 'diffs/1.fits', like inputs[0]");
        assertThat(problem(input("d/1.fits", "diffs/"), input("t", "diffs")))
                .isEqualTo("inputs[1] would be staged as 'diffs', the directory inputs[0] goes into: give one of them "
                        + "another name");
    }

    @Test
    void aNameIsAPlainFileNameOrADirectorysNameAndASlash() {
        for (String ok : new String[]{"", "x.fits", "diffs/", "..x", ".hidden"}) {
            assertThat(input("x", ok).name()).isEqualTo(ok);
        }
        for (String bad : new String[]{"a/b", "/", "a//", "./", "../", ".", "..", "/x", "diffs/x"}) {
            assertThatThrownBy(() -> input("x", bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("must be a plain file name, or a directory's name and a slash");
        }
    }

    @Test
    void aNameSetsTwoInputsOfOneBaseNameApart() {
        assertThat(problem(input("night1/x.fits", ""), input("night2/x.fits", "x2.fits"))).isNull();
        assertThat(problem(input("x", ""))).isNull();
        assertThat(DataCodec.stagingClash(List.of())).isNull();
    }
}
