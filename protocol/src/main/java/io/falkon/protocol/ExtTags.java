package io.falkon.protocol;

/**
 * Allocated {@code ext} tags ({@code docs/protocol.md} section 6). Tags 0x8000-0xFFFF are for private
 * experiments and never allocated here.
 */
public final class ExtTags {
    /**
     * In a TaskSpec: {@code u8}, how many times the dispatcher may re-dispatch the task after a
     * framework failure (lost executor, rejection, fetch failure, dispatch timeout). Absent: the
     * dispatcher's default (3).
     */
    public static final int RETRIES = 0x0001;

    /** In a TaskSpec: the task's input objects ({@link DataCodec#encodeInputs}). */
    public static final int INPUTS = 0x0002;

    /** In a TaskSpec: files the task writes that become cached objects ({@link DataCodec#encodeOutputs}). */
    public static final int OUTPUTS = 0x0003;

    /**
     * In a TaskSpec: the shell command line (UTF-8) that this task's argv was split from, run without
     * the shell because it needs none ({@link ShellLine}). When the program cannot be started the
     * executor runs this line with {@code /bin/sh -c} instead, so the result is the shell's.
     */
    public static final int SHELL_LINE = 0x0004;

    /**
     * In a TaskSpec: {@code u8}, how many more times the dispatcher runs the task after it fails on
     * its own (it exits non-zero, or is killed at its wall time), each time on another executor where
     * one can take it; only the last attempt's result is delivered ({@code falkon run --retries N},
     * as GNU parallel's). Absent: 0. Executors ignore it.
     */
    public static final int RETRIES_ON_FAILURE = 0x0005;

    /**
     * In a TaskSpec: {@code str}, the task's name in its instance (unique there), by which other
     * tasks of the instance order themselves after it ({@link #AFTER}).
     */
    public static final int NAME = 0x0006;

    /**
     * In a TaskSpec: {@code list<str>}, names of tasks of the same instance that must succeed before
     * this one starts (ordering without files; dependencies by data come from INPUTS naming what
     * another task's OUTPUTS declare). Executors ignore it.
     */
    public static final int AFTER = 0x0007;

    /**
     * In a TaskSpec: {@code i32}, the task's priority: the dispatcher starts a queued task of a higher
     * priority before any of a lower one, in submission order within a priority. Absent: 0 (negative
     * values come after it). Executors ignore it.
     */
    public static final int PRIORITY = 0x0008;

    /**
     * In a TaskSpec: {@code cores:u32 memoryMiB:u32}, what the task needs of one executor: that many
     * of its slots (1 to {@link TaskSpec#MAX_CORES}), and that much of the memory it advertises (0:
     * not stated). Absent: one slot, memory not stated. The dispatcher sends the task only where both
     * fit; an executor runs it on that many slots at once, and the C executor gives it that many
     * CPUs of its own when its slots are pinned.
     */
    public static final int RESOURCES = 0x0009;

    /**
     * In a TaskSpec: {@code command:list<str> payload:blob}, the persistent worker that runs the
     * task ({@link PersistentWorker}): instead of starting the task's argv as a process, the
     * executor hands argv, env, working directory and payload to a resident process running
     * {@code command}, started once and kept, and reads its result back (docs/protocol.md section 9).
     */
    public static final int WORKER = 0x000A;

    /**
     * In a TaskSpec: {@code count:u16 (index:u16)*}, the OUTPUTS (by their place in that list, each
     * once) that are intermediate: kept in the producing executor's cache, held there for the tasks
     * that read them and never written to the shared store ({@link DataCodec#encodeTemporary}). An
     * executor that cannot hold one (no cache, the first-available policy, no room) writes it
     * through like any output, and so does an executor that does not know this field.
     */
    public static final int TEMPORARY = 0x000B;

    /**
     * In a TaskSpec: {@code count:u16 (index:u16)*}, the OUTPUTS (by place, ascending, each once) to
     * append to the executor's output archive in the store (a tar, one per executor at a time) rather
     * than save as files of their own; the result's ARCHIVED field says where each went. None may be
     * TEMPORARY too. An executor that does not know this field saves them as files.
     */
    public static final int ARCHIVE = 0x000C;

    /**
     * In a TaskSpec: {@code diskMiB:u32}, the scratch space the task needs in MiB on the file system
     * of its executor's working directory. The dispatcher sends the task only where that much of
     * what the executor advertises (its {@code diskMiB} registration attribute) is not already
     * stated by the tasks it runs, and refuses it when no executor could ever hold it. Absent, or 0:
     * not stated. Executors ignore it: the dispatcher keeps the account.
     */
    public static final int DISK = 0x000D;

    /**
     * In a TaskSpec: the named resources the task needs of one executor, GPUs and the like
     * ({@link NamedResources}: {@code count:u16} then {@code name:str amount:u32}, names sorted,
     * each once). The dispatcher sends the task only where that much of each is not held by the
     * tasks the executor runs (its {@code resources} registration attribute), and refuses it when no
     * executor could ever hold it. The executor picks the devices (indices) and hands them over in
     * the task's environment.
     */
    public static final int NAMED_RESOURCES = 0x000E;

    /**
     * In a TaskSpec: {@code count:u16 (index:u16)*}, the INPUTS (by place, ascending, each once) that
     * the task only reads. An executor that can may give the task a read-only view of the cached or
     * stored file in place of a copy (the C executor: a read-only bind mount in a mount namespace of
     * the task's own); a write to it, or its removal, then fails. An executor that cannot, or that
     * does not know this field, copies it as any input. No declared output may have the path of a
     * read-only input (docs/data-diffusion.md, "Read-only inputs").
     */
    public static final int READ_ONLY = 0x000F;

    /** In a DispatchedTask: peers believed to cache the task's inputs ({@link DataCodec#encodeHints}). */
    public static final int HINTS = 0x0010;

    /**
     * In a DispatchedTask: {@code u8} 1 = read every input from the shared store and cache nothing
     * (the first-available policy: no data diffusion).
     */
    public static final int BYPASS_CACHE = 0x0011;

    /** In an Execution: where the task's inputs came from ({@link DataStats}). */
    public static final int DATA_STATS = 0x0020;

    /**
     * In an Execution of status DEPENDENCY_FAILED: {@code producer:u64 what:str}, the client task id
     * of the task that failed first upstream and what of it this one needed (an object id, or
     * {@code after:NAME}).
     */
    public static final int DEPENDENCY = 0x0021;

    /**
     * In an Execution: {@code count:u16 (id:str)*}, the task's temporary outputs that the executor
     * holds in its cache (pinned until a RELEASE names them) and did not write to the store.
     */
    public static final int HELD = 0x0022;

    /**
     * In an Execution: {@code count:u16 (id:str archive:str offset:u64 size:u64 sha256:str)*}, where each
     * archived output went: the archive's path under the output root, the offset of its bytes there,
     * their count and SHA-256 ({@link DataCodec.ArchivedOutput}).
     */
    public static final int ARCHIVED = 0x0023;

    private ExtTags() {
    }
}
