package io.falkon.dispatcher.journal;

import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.JournalContract;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/** The journal contract for the file journal, under each of its fsync policies. */
class FileJournalContractTest {

    abstract static class Policy extends JournalContract {
        @TempDir
        Path dir;

        abstract FsyncPolicy policy();

        @Override
        protected Journal open() throws Exception {
            return FileJournal.open(dir, policy());
        }

        @Override
        protected void close(Journal journal) {
            ((FileJournal) journal).close();
        }
    }

    @Nested
    class Always extends Policy {
        @Override
        FsyncPolicy policy() {
            return FsyncPolicy.ALWAYS;
        }
    }

    @Nested
    class Batch extends Policy {
        @Override
        FsyncPolicy policy() {
            return FsyncPolicy.BATCH;
        }
    }

    @Nested
    class Never extends Policy {
        @Override
        FsyncPolicy policy() {
            return FsyncPolicy.NEVER;
        }
    }
}
