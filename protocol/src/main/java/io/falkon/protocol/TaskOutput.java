package io.falkon.protocol;

import java.util.Objects;

/**
 * A file a task writes that becomes a cached object when the task succeeds.
 *
 * @param path where the task writes it, relative to its working directory
 * @param id        the object id it is registered under
 * @param temporary an intermediate object: kept on the producing executor for the tasks that read it,
 *                  never written to the shared store (docs/data-diffusion.md, "Intermediate data")
 */
public record TaskOutput(String path, String id, boolean temporary) {
    public TaskOutput {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(id, "id");
        if (path.isEmpty() || id.isEmpty()) {
            throw new IllegalArgumentException("an output needs a path and an id");
        }
    }

    /** An output written through to the shared store. */
    public TaskOutput(String path, String id) {
        this(path, id, false);
    }

    /** The same output marked temporary. */
    public TaskOutput asTemporary() {
        return new TaskOutput(path, id, true);
    }
}
