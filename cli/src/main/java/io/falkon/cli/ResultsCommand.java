package io.falkon.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.falkon.client.TaskResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

@Command(name = "results", mixinStandardHelpOptions = true,
        description = "Show the results a detached instance has so far: each finished task's output, the failures "
                + "with their lines, and a summary. The dispatcher keeps them: they can be fetched again.")
final class ResultsCommand implements Callable<Integer> {

    @Mixin
    InstanceRef instance;

    @Option(names = "--failed", description = "only the tasks that failed")
    boolean failedOnly;

    @Option(names = "--task", paramLabel = "N", description = "only task N (its number, from 1 as in {#}; "
            + "repeatable)")
    List<Long> tasks;

    @Option(names = "--line", paramLabel = "L", description = "only the task from line L of the task file "
            + "(repeatable)")
    List<Integer> lines;

    @Option(names = "--json", description = "print each result as a JSON line (as --results FILE writes them) "
            + "instead of the output")
    boolean json;

    @Option(names = {"-q", "--quiet"}, description = "do not print the tasks' output, only failures and the summary")
    boolean quiet;

    @Option(names = "--output-files", paramLabel = "TEMPLATE", description = "write each task's output to files "
            + "instead: {#} the task's number, {line} its line, {stream} stdout or stderr")
    String outputFiles;

    @Option(names = "--files", description = "list each shown task's archived outputs: where in which archive "
            + "(outputs declared with \"archive\": true)")
    boolean files;

    @Option(names = "--extract", paramLabel = "DIR", description = "copy each shown task's archived outputs out "
            + "of the archives into DIR/ID, each checked against its SHA-256")
    java.nio.file.Path extract;

    @Option(names = "--store", paramLabel = "DIR", description = "where the archives are: the executors' output "
            + "root (default: the current directory)")
    java.nio.file.Path store = java.nio.file.Path.of(".");

    @Override
    public Integer call() throws Exception {
        Logging.level("WARN");
        InstanceRecords.Record record = instance.record();
        TaskLines lines = TaskLines.of(record);
        if (this.lines != null && !lines.known()) {
            throw new Falkon.UserError("--line: the lines of this instance's tasks are not known: " + lines.why());
        }
        Set<Long> wantedTasks = tasks == null ? null : new HashSet<>(tasks);
        Set<Integer> wantedLines = this.lines == null ? null : new HashSet<>(this.lines);
        JsonNode status;
        String id;
        List<TaskResult> results;
        try (Takeover t = new Takeover(instance.connect(), record.key(), true)) {
            id = Long.toUnsignedString(t.instance().id(), 16);
            t.awaitKept();
            status = t.status();
            results = List.copyOf(t.results().values());
        }
        OutputPrinter printer = json || (quiet && outputFiles == null) ? null
                : new OutputPrinter(System.out, System.err, false, outputFiles, () -> { }, false);
        long shown = 0;
        long failed = 0;
        for (TaskResult r : results) {
            long task = r.taskId();
            int line = lines.line(task);
            if ((failedOnly && r.succeeded()) || (wantedTasks != null && !wantedTasks.contains(task + 1))
                    || (wantedLines != null && !wantedLines.contains(line))) {
                continue;
            }
            shown++;
            if (!r.succeeded()) {
                failed++;
            }
            if (json) {
                System.out.println(ResultJson.line(r, line, lines.text(task)));
                continue;
            }
            if (printer != null) {
                printer.finished(task, line, r);
            }
            archived(r, line >= 0 ? "line " + line : "task " + (task + 1));
            if (!r.succeeded()) {
                System.err.println((line >= 0 ? "line " + line : "task " + (task + 1)) + ": " + Workload.describe(r,
                        producer -> lines.line(producer) >= 0 ? "line " + lines.line(producer)
                                : "task " + (producer + 1)));
            }
        }
        if (printer != null) {
            printer.flush();
        }
        System.out.flush();
        if (!json) {
            System.out.println(WaitCommand.summary(id, status) + "; " + results.size() + " result(s) kept"
                    + (shown == results.size() ? "" : ", " + shown + " shown"));
            if (!lines.known()) {
                System.err.println("(tasks are named by number: " + lines.why() + ")");
            }
        }
        return failed > 0 ? 1 : 0; // like wait and run: 0 iff every task shown succeeded
    }

    /** --files and --extract for one result: its outputs in the executors' archives. */
    private void archived(TaskResult r, String which) throws java.io.IOException {
        if (!files && extract == null) {
            return;
        }
        java.util.List<io.falkon.protocol.DataCodec.ArchivedOutput> archived;
        try {
            archived = io.falkon.protocol.DataCodec.archivedOf(r.execution());
        } catch (io.falkon.protocol.ProtocolException e) { // a result kept from before ids had one form
            throw new Falkon.UserError(which + ": its archived outputs cannot be read: " + e.getMessage());
        }
        for (io.falkon.protocol.DataCodec.ArchivedOutput e : archived) {
            if (files) {
                System.out.println(which + ": " + e.id() + "  " + e.archive() + " @" + e.offset() + " (" + e.size()
                        + " bytes)");
            }
            if (extract != null) {
                extract(e);
            }
        }
    }

    /**
     * Writes one archived output under --extract DIR as DIR/ID: never outside DIR (the id is canonical,
     * and no link in DIR is followed out of it), and never over a file that holds something else.
     */
    private void extract(io.falkon.protocol.DataCodec.ArchivedOutput e) throws java.io.IOException {
        java.nio.file.Path root = extract.toAbsolutePath().normalize();
        String problem = io.falkon.protocol.ObjectId.problem(e.id());
        if (problem != null) {
            throw new Falkon.UserError("--extract: output id '" + io.falkon.protocol.LogSafe.text(e.id())
                    + "' cannot be extracted: " + problem);
        }
        java.nio.file.Path target = root.resolve(e.id());
        java.nio.file.Files.createDirectories(target.getParent());
        if (!target.getParent().toRealPath().startsWith(root.toRealPath())) {
            throw new Falkon.UserError("--extract: output id '" + e.id() + "' leads out of " + root
                    + " through a symbolic link");
        }
        byte[] bytes = io.falkon.datacache.OutputArchive.read(store, new io.falkon.datacache.OutputArchive.Entry(
                e.archive(), e.offset(), e.size(), e.sha256()));
        try {
            java.nio.file.Files.write(target, bytes, java.nio.file.StandardOpenOption.CREATE_NEW,
                    java.nio.file.StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.FileAlreadyExistsException exists) {
            if (!java.nio.file.Files.isRegularFile(target, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    || !java.util.Arrays.equals(java.nio.file.Files.readAllBytes(target), bytes)) {
                throw new Falkon.UserError("--extract: " + target + " exists and holds something else: not "
                        + "overwritten (extract into an empty directory)");
            }
        }
    }
}
