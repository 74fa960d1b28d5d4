package io.falkon.protocol;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What to run: a program and its arguments, extra environment, working directory and
 * wall-time limit. Immutable; build one with {@link #of}, {@link #shell} or {@link #builder}.
 *
 * @param argv           program and arguments; {@code argv.get(0)} is the program
 * @param env            variables added to (or overriding) the executor's environment
 * @param workDir        working directory; empty means the executor's own
 * @param wallTimeMillis wall-time limit in milliseconds, 0 for none
 * @param ext            protocol extension fields, normally empty
 */
public record TaskSpec(List<String> argv, Map<String, String> env, String workDir, long wallTimeMillis,
                       List<ExtField> ext) {

    /** Largest wall-time limit the protocol can carry (u32 milliseconds). */
    public static final long MAX_WALL_TIME_MILLIS = 0xFFFF_FFFFL;

    /** Most cores one task may ask for ({@link ExtTags#RESOURCES}): far beyond any node of today. */
    public static final int MAX_CORES = 65_536;

    /** Most memory one task may ask for, in MiB (u32): 4 PiB. */
    public static final long MAX_MEMORY_MIB = 0xFFFF_FFFFL;

    /** Most scratch space one task may ask for, in MiB (u32). */
    public static final long MAX_DISK_MIB = 0xFFFF_FFFFL;

    public TaskSpec {
        Objects.requireNonNull(argv, "argv");
        Objects.requireNonNull(env, "env");
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(ext, "ext");
        String problem = problem(argv, env, wallTimeMillis);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        argv = List.copyOf(argv);
        env = Collections.unmodifiableMap(new LinkedHashMap<>(env));
        ext = List.copyOf(ext);
    }

    /** The reason these fields do not make a valid task, or {@code null} if they do. */
    static String problem(List<String> argv, Map<String, String> env, long wallTimeMillis) {
        if (argv.isEmpty()) {
            return "argv is empty (a task needs a command)";
        }
        for (int i = 0; i < argv.size(); i++) {
            if (argv.get(i) == null) {
                return "argv[" + i + "] is null";
            }
        }
        if (argv.get(0).isEmpty()) {
            return "argv[0] (the command) is empty";
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey() == null || e.getKey().isEmpty() || e.getKey().indexOf('=') >= 0) {
                return "env has an invalid variable name: '" + e.getKey() + "'";
            }
            if (e.getValue() == null) {
                return "env " + e.getKey() + " has no value";
            }
        }
        if (wallTimeMillis < 0 || wallTimeMillis > MAX_WALL_TIME_MILLIS) {
            return "wall time " + wallTimeMillis + " ms is out of range 0.." + MAX_WALL_TIME_MILLIS;
        }
        return null;
    }

    /** A task running {@code argv} directly, no shell. */
    public static TaskSpec of(String... argv) {
        return new TaskSpec(List.of(argv), Map.of(), "", 0, ExtField.NONE);
    }

    /** A task running {@code command} with {@code /bin/sh -c}. */
    public static TaskSpec shell(String command) {
        return of("/bin/sh", "-c", command);
    }

    public static Builder builder(String... argv) {
        return new Builder(List.of(argv));
    }

    public static Builder builder(List<String> argv) {
        return new Builder(argv);
    }

    /** The task's own retry limit ({@link ExtTags#RETRIES}), or -1 to use the dispatcher's default. */
    public int retries() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.RETRIES) {
                byte[] v = f.value();
                return v.length == 1 ? v[0] & 0xFF : -1;
            }
        }
        return -1;
    }

    /** The task's priority ({@link ExtTags#PRIORITY}), 0 if unset. */
    public int priority() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.PRIORITY) {
                byte[] v = f.value();
                return v.length == 4 ? (v[0] << 24) | (v[1] & 0xFF) << 16 | (v[2] & 0xFF) << 8 | (v[3] & 0xFF) : 0;
            }
        }
        return 0;
    }

    /** How many of an executor's slots the task takes at once ({@link ExtTags#RESOURCES}), 1 if unset. */
    public int cores() {
        byte[] v = resources();
        return v == null ? 1 : (int) u32(v, 0);
    }

    /** The memory the task needs of its executor, in MiB ({@link ExtTags#RESOURCES}), 0 if not stated. */
    public long memoryMiB() {
        byte[] v = resources();
        return v == null ? 0 : u32(v, 4);
    }

    /** The scratch space the task needs on its executor, in MiB ({@link ExtTags#DISK}), 0 if not stated. */
    public long diskMiB() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.DISK && f.value().length == 4) {
                return u32(f.value(), 0);
            }
        }
        return 0;
    }

    /** The named resources the task needs of one executor ({@link ExtTags#NAMED_RESOURCES}), null if none. */
    public NamedResources namedResources() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.NAMED_RESOURCES) {
                return NamedResources.decode(f.value());
            }
        }
        return null;
    }

    private byte[] resources() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.RESOURCES && f.value().length == 8) {
                return f.value();
            }
        }
        return null;
    }

    private static long u32(byte[] v, int at) {
        return (v[at] & 0xFFL) << 24 | (v[at + 1] & 0xFF) << 16 | (v[at + 2] & 0xFF) << 8 | (v[at + 3] & 0xFF);
    }

    /** Why a task cannot ask for {@code cores} and {@code memoryMiB}, or null when it can. */
    public static String resourcesProblem(long cores, long memoryMiB) {
        if (cores < 1 || cores > MAX_CORES) {
            return "cores must be 1.." + MAX_CORES + ", got " + cores;
        }
        if (memoryMiB < 0 || memoryMiB > MAX_MEMORY_MIB) {
            return "memory must be 0.." + MAX_MEMORY_MIB + " MiB, got " + memoryMiB;
        }
        return null;
    }

    /** How many more times the task runs after failing on its own ({@link ExtTags#RETRIES_ON_FAILURE}), 0 if unset. */
    public int retriesOnFailure() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.RETRIES_ON_FAILURE) {
                byte[] v = f.value();
                return v.length == 1 ? v[0] & 0xFF : 0;
            }
        }
        return 0;
    }

    /** The task's name in its instance ({@link ExtTags#NAME}), or null. */
    public String name() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.NAME) {
                return new String(f.value(), java.nio.charset.StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    /** Names of tasks that must succeed before this one starts ({@link ExtTags#AFTER}); empty for most. */
    public List<String> after() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.AFTER) {
                return DataCodec.decodeNames(f.value());
            }
        }
        return List.of();
    }

    /** The persistent worker that runs the task ({@link ExtTags#WORKER}), or null: a process of its own. */
    public PersistentWorker worker() {
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.WORKER) {
                return PersistentWorker.decode(f.value());
            }
        }
        return null;
    }

    /** The task's input objects (data diffusion), marked read-only as READ_ONLY says; empty for most tasks. */
    public List<TaskInput> inputs() {
        List<TaskInput> inputs = List.of();
        byte[] readOnly = null;
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.INPUTS) {
                inputs = DataCodec.decodeInputs(f.value());
            } else if (f.tag() == ExtTags.READ_ONLY) {
                readOnly = f.value();
            }
        }
        return readOnly == null ? inputs : DataCodec.markReadOnly(inputs, readOnly);
    }

    /** Files the task writes that become cached objects when it succeeds. */
    public List<TaskOutput> outputs() {
        List<TaskOutput> outputs = List.of();
        byte[] temporary = null;
        byte[] archive = null;
        for (ExtField f : ext) {
            if (f.tag() == ExtTags.OUTPUTS) {
                outputs = DataCodec.decodeOutputs(f.value());
            } else if (f.tag() == ExtTags.TEMPORARY) {
                temporary = f.value();
            } else if (f.tag() == ExtTags.ARCHIVE) {
                archive = f.value();
            }
        }
        return temporary == null && archive == null ? outputs : DataCodec.mark(outputs, temporary, archive);
    }

    /** The wall-time limit, or {@link Duration#ZERO} for none. */
    public Duration wallTime() {
        return Duration.ofMillis(wallTimeMillis);
    }

    public Builder toBuilder() {
        Builder b = new Builder(argv);
        b.env.putAll(env);
        b.workDir = workDir;
        b.wallTimeMillis = wallTimeMillis;
        b.ext.addAll(ext);
        return b;
    }

    /** Builds a {@link TaskSpec}. */
    public static final class Builder {
        private final List<String> argv;
        private final Map<String, String> env = new LinkedHashMap<>();
        private final List<ExtField> ext = new ArrayList<>();
        private String workDir = "";
        private long wallTimeMillis;

        private Builder(List<String> argv) {
            this.argv = new ArrayList<>(argv);
        }

        public Builder env(String name, String value) {
            env.put(name, value);
            return this;
        }

        public Builder env(Map<String, String> vars) {
            env.putAll(vars);
            return this;
        }

        public Builder workDir(String dir) {
            this.workDir = Objects.requireNonNull(dir, "workDir");
            return this;
        }

        public Builder wallTime(Duration limit) {
            this.wallTimeMillis = limit.toMillis();
            return this;
        }

        public Builder ext(ExtField field) {
            ext.removeIf(f -> f.tag() == field.tag());
            ext.add(field);
            return this;
        }

        /**
         * How many times the dispatcher may re-dispatch this task after framework failures (0-255;
         * the dispatcher's default, 3, when not set). Application failures are never retried.
         */
        public Builder retries(int n) {
            if (n < 0 || n > 255) {
                throw new IllegalArgumentException("retries must be 0..255, got " + n);
            }
            return ext(new ExtField(ExtTags.RETRIES, new byte[]{(byte) n}));
        }

        /**
         * How many more times the dispatcher runs this task after it fails on its own (a non-zero
         * exit, a wall-time kill): 0-255, 0 by default. Only the last attempt's result is delivered.
         */
        public Builder retriesOnFailure(int n) {
            if (n < 0 || n > 255) {
                throw new IllegalArgumentException("retries on failure must be 0..255, got " + n);
            }
            return n == 0 ? this : ext(new ExtField(ExtTags.RETRIES_ON_FAILURE, new byte[]{(byte) n}));
        }

        /**
         * The task's priority: a queued task of a higher priority starts before any of a lower one
         * (submission order within a priority). 0 by default; negative values come after it.
         */
        public Builder priority(int priority) {
            if (priority == 0) {
                ext.removeIf(f -> f.tag() == ExtTags.PRIORITY);
                return this;
            }
            return ext(new ExtField(ExtTags.PRIORITY, new byte[]{(byte) (priority >>> 24), (byte) (priority >>> 16),
                    (byte) (priority >>> 8), (byte) priority}));
        }

        /**
         * What the task needs of one executor: {@code cores} of its slots at once (1 by default)
         * and {@code memoryMiB} of the memory it advertises (0: not stated). The dispatcher sends it
         * only where both fit, and refuses it when no executor could ever hold it. Stated, even as
         * one core, the task runs on that many CPUs of its own where the executor pins its slots
         * (the C executor); a task that states nothing runs on all of the executor's CPUs.
         */
        public Builder resources(int cores, long memoryMiB) {
            String problem = resourcesProblem(cores, memoryMiB);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            ext.removeIf(f -> f.tag() == ExtTags.RESOURCES);
            byte[] v = new byte[8];
            for (int i = 0; i < 4; i++) {
                v[i] = (byte) (cores >>> (24 - 8 * i));
                v[4 + i] = (byte) (memoryMiB >>> (24 - 8 * i));
            }
            return ext(new ExtField(ExtTags.RESOURCES, v));
        }

        /**
         * The scratch space the task needs, in MiB, on the file system of its executor's working
         * directory ({@link ExtTags#DISK}; 0: not stated). The dispatcher sends it only where that
         * much of what the executor advertises is not stated by the other tasks it runs.
         */
        public Builder disk(long diskMiB) {
            if (diskMiB < 0 || diskMiB > MAX_DISK_MIB) {
                throw new IllegalArgumentException("disk must be 0.." + MAX_DISK_MIB + " MiB, got " + diskMiB);
            }
            ext.removeIf(f -> f.tag() == ExtTags.DISK);
            if (diskMiB == 0) {
                return this;
            }
            return ext(new ExtField(ExtTags.DISK, new byte[]{(byte) (diskMiB >>> 24), (byte) (diskMiB >>> 16),
                    (byte) (diskMiB >>> 8), (byte) diskMiB}));
        }

        /**
         * The named resources the task needs of one executor, by name (GPUs as {@code gpus}, a
         * licence, ...; {@link NamedResources}): the dispatcher sends it only where that much of each
         * is free, and the executor hands the devices it picked over in the task's environment
         * ({@code CUDA_VISIBLE_DEVICES}, {@code FALKON_RESOURCE_<NAME>}). An empty map clears them.
         */
        public Builder namedResources(Map<String, ? extends Number> amounts) {
            NamedResources r = NamedResources.of(amounts);
            ext.removeIf(f -> f.tag() == ExtTags.NAMED_RESOURCES);
            return r == null ? this : ext(r.toExt());
        }

        /** {@code n} GPUs of one executor, each a device of its own ({@link #namedResources}). */
        public Builder gpus(int n) {
            return namedResources(Map.of(NamedResources.GPUS, n));
        }

        /**
         * Runs the task in a persistent worker instead of a process of its own: the executor keeps
         * a process running {@code command} (one per slot, started on first use) and hands it this
         * task's argv, environment, working directory and {@code payload} (docs/protocol.md section 9).
         */
        public Builder worker(List<String> command, byte[] payload) {
            return ext(new PersistentWorker(command, payload).toExt());
        }

        /**
         * The task's name in its instance (unique there): other tasks of the instance can wait for it
         * to succeed with {@link #after}.
         */
        public Builder name(String name) {
            String problem = DataCodec.nameProblem(name);
            if (problem != null) {
                throw new IllegalArgumentException(problem);
            }
            return ext(new ExtField(ExtTags.NAME, name.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }

        /**
         * Tasks of the same instance, by name, that must succeed before this one starts; if one
         * fails, this one ends {@code DEPENDENCY_FAILED} without running. They must have been
         * submitted before it (or in the same bundle, before it).
         */
        public Builder after(List<String> names) {
            for (String n : names) {
                String problem = DataCodec.nameProblem(n);
                if (problem != null) {
                    throw new IllegalArgumentException("after: " + problem);
                }
            }
            return names.isEmpty() ? this : ext(new ExtField(ExtTags.AFTER, DataCodec.encodeNames(names)));
        }

        public Builder after(String... names) {
            return after(List.of(names));
        }

        /** The objects the task reads; they appear as files in its working directory. */
        public Builder inputs(List<TaskInput> inputs) {
            if (inputs.isEmpty()) {
                return this;
            }
            ext(new ExtField(ExtTags.INPUTS, DataCodec.encodeInputs(inputs)));
            byte[] readOnly = DataCodec.encodeReadOnly(inputs);
            return readOnly == null ? this : ext(new ExtField(ExtTags.READ_ONLY, readOnly));
        }

        /** Files the task writes that are registered as objects when it succeeds. */
        public Builder outputs(List<TaskOutput> outputs) {
            if (outputs.isEmpty()) {
                return this;
            }
            ext(new ExtField(ExtTags.OUTPUTS, DataCodec.encodeOutputs(outputs)));
            byte[] temporary = DataCodec.encodeTemporary(outputs);
            if (temporary != null) {
                ext(new ExtField(ExtTags.TEMPORARY, temporary));
            }
            byte[] archive = DataCodec.encodeArchive(outputs);
            return archive == null ? this : ext(new ExtField(ExtTags.ARCHIVE, archive));
        }

        public TaskSpec build() {
            return new TaskSpec(argv, env, workDir, wallTimeMillis, ext);
        }
    }
}
