package io.falkon.swift.app;

import io.falkon.protocol.TaskSpec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One {@code app()} invocation as Swift hands it over, copied out of its job specification (Swift
 * drops the specification once the job is SUBMITTED): the program (Swift's wrapper, normally), its
 * arguments, working directory, environment and wall-time limit (null: none).
 */
public record AppJob(String executable, List<String> arguments, String directory, Map<String, String> environment,
                     Duration wallTime) {

    public AppJob {
        if (executable == null || executable.isBlank()) {
            throw new IllegalArgumentException("the job names no executable");
        }
        arguments = List.copyOf(arguments);
        environment = Map.copyOf(environment);
    }

    /** The Falkon task that runs it: the program with its arguments, no shell in between. */
    public TaskSpec task() {
        List<String> argv = new ArrayList<>(arguments.size() + 1);
        argv.add(executable);
        argv.addAll(arguments);
        TaskSpec.Builder b = TaskSpec.builder(argv).env(environment);
        if (directory != null && !directory.isEmpty()) {
            b.workDir(directory);
        }
        if (wallTime != null) {
            b.wallTime(wallTime);
        }
        return b.build();
    }
}
