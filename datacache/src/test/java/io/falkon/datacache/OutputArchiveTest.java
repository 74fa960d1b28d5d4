package io.falkon.datacache;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Outputs appended to an executor's archive: whole entries, where the index says, readable as a tar. */
class OutputArchiveTest {
    @TempDir
    Path dir;

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    private static Map<String, String> tarEntries(Path archive) throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        try (InputStream f = Files.newInputStream(archive); TarArchiveInputStream tar = new TarArchiveInputStream(f)) {
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                out.put(e.getName(), new String(tar.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    @Test
    void entriesAreWhereTheIndexSaysAndTheArchiveIsATarOfThemEvenBeforeItIsFinished() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        String longId = "results/" + "x".repeat(150) + "/out.txt";
        List<OutputArchive.Entry> index = new ArrayList<>();
        try (OutputArchive a = new OutputArchive(store, "node 1/a", OutputArchive.DEFAULT_THRESHOLD)) {
            index.add(a.append("r/1", file("one", "first\n")));
            index.add(a.append(longId, file("two", "second, under a long name\n")));
            index.add(a.append("r/3", file("three", "")));
            assertThat(index).extracting(OutputArchive.Entry::archive).containsOnly(a.current());
            assertThat(a.current()).startsWith("archives/node_1_a-").endsWith("-1.tar");
            // before it is finished: whole entries only, readable by offset and as a tar
            assertThat(new String(OutputArchive.read(store, index.get(1)), StandardCharsets.UTF_8))
                    .isEqualTo("second, under a long name\n");
            assertThat(tarEntries(store.resolve(index.get(0).archive())))
                    .containsExactly(Map.entry("r/1", "first\n"), Map.entry(longId, "second, under a long name\n"),
                            Map.entry("r/3", ""));
        }
        Path archive = store.resolve(index.get(0).archive());
        assertThat(Files.size(archive) % 512).as("finished: whole blocks").isZero();
        assertThat(new String(OutputArchive.read(store, index.get(0)), StandardCharsets.UTF_8)).isEqualTo("first\n");
        assertThat(tarEntries(archive)).hasSize(3);
    }

    @Test
    void pastTheThresholdAnArchiveIsFinishedAndTheNextEntryBeginsAnother() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        try (OutputArchive a = new OutputArchive(store, "n", 4096)) {
            List<OutputArchive.Entry> index = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                index.add(a.append("o/" + i, file("f" + i, "x".repeat(1000))));
            }
            List<String> archives = index.stream().map(OutputArchive.Entry::archive).distinct().toList();
            assertThat(archives).hasSizeGreaterThan(1);
            int total = 0;
            for (String name : archives) {
                total += tarEntries(store.resolve(name)).size();
            }
            assertThat(total).isEqualTo(10);
            for (OutputArchive.Entry e : index) {
                assertThat(OutputArchive.read(store, e)).hasSize(1000);
            }
        }
    }

    @Test
    void anEntryChangedInItsArchiveIsRefused() throws Exception {
        Path store = Files.createDirectories(dir.resolve("store"));
        OutputArchive.Entry e;
        try (OutputArchive a = new OutputArchive(store, "n", OutputArchive.DEFAULT_THRESHOLD)) {
            e = a.append("r/1", file("one", "genuine"));
        }
        byte[] all = Files.readAllBytes(store.resolve(e.archive()));
        all[(int) e.offset()] = 'G';
        Files.write(store.resolve(e.archive()), all);
        assertThatThrownBy(() -> OutputArchive.read(store, e)).hasMessageContaining("does not match its SHA-256");
    }
}
