package io.falkon.protocol;

import java.util.Objects;

/**
 * A file a task writes that becomes a cached object when the task succeeds.
 *
 * @param path where the task writes it, relative to its working directory (or absolute): a canonical
 *             path ({@link ObjectId#pathProblem}), no "." or ".." segment
 * @param id        the object id it is registered under ({@link ObjectId}: canonical and relative)
 * @param temporary an intermediate object: kept on the producing executor for the tasks that read it,
 *                  never written to the shared store (docs/data-diffusion.md, "Intermediate data")
 * @param archived  appended to the executor's output archive in the store instead of saved as a file of
 *                  its own (docs/data-diffusion.md, "Output archives"); not with temporary
 */
public record TaskOutput(String path, String id, boolean temporary, boolean archived) {
    public TaskOutput {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(id, "id");
        String problem = ObjectId.pathProblem(path);
        if (problem != null) {
            throw new IllegalArgumentException("path: " + problem);
        }
        problem = ObjectId.problem(id);
        if (problem != null) {
            throw new IllegalArgumentException("id: " + problem);
        }
        if (temporary && archived) {
            throw new IllegalArgumentException("an output is either temporary or archived, not both");
        }
    }

    public TaskOutput(String path, String id, boolean temporary) {
        this(path, id, temporary, false);
    }

    /** An output written through to the shared store. */
    public TaskOutput(String path, String id) {
        this(path, id, false, false);
    }

    /** The same output marked temporary. */
    public TaskOutput asTemporary() {
        return new TaskOutput(path, id, true, false);
    }

    /** The same output appended to an archive. */
    public TaskOutput asArchived() {
        return new TaskOutput(path, id, false, true);
    }
}
