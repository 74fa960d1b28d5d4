package io.falkon.protocol;

import java.util.Objects;

/**
 * A file a task writes that becomes a cached object when the task succeeds.
 *
 * @param path where the task writes it, relative to its working directory
 * @param id   the object id it is registered under
 */
public record TaskOutput(String path, String id) {
    public TaskOutput {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(id, "id");
        if (path.isEmpty() || id.isEmpty()) {
            throw new IllegalArgumentException("an output needs a path and an id");
        }
    }
}
