package io.falkon.cli;

import picocli.CommandLine.Option;

import java.io.IOException;

/**
 * {@code --stop-with-stdin} of the long-running commands a program starts for itself
 * ({@code falkon dispatcher}, {@code falkon provision}): the command stops, as on SIGTERM, when its
 * standard input reaches its end. The program starts it with a pipe as its input and keeps the pipe's
 * writing end; the kernel closes that end when the program exits, however it exits, so a program
 * killed outright (SIGKILL, no {@code atexit}) leaves no dispatcher or provisioner running on, nor
 * allocations held (Python's {@code LocalDispatcher}, the Snakemake plugin).
 */
final class StdinLifeline {

    @Option(names = "--stop-with-stdin", description = "stop, as on SIGTERM, when standard input reaches its "
            + "end (what comes in is read and ignored): a program that starts this command with a pipe as its "
            + "input takes it with it however that program ends, killed included")
    boolean asked;

    /** With {@code --stop-with-stdin}: a thread that reads standard input to its end, then exits. */
    void startIfAsked(String command) {
        if (!asked) {
            return;
        }
        Thread watch = new Thread(() -> {
            byte[] ignored = new byte[4096];
            try {
                while (System.in.read(ignored) >= 0) {
                    // what the parent writes means nothing; only the end counts
                }
            } catch (IOException e) {
                // an input that cannot be read is an input that has ended
            }
            System.err.println(command + ": standard input ended (--stop-with-stdin): stopping");
            System.exit(0); // the shutdown hooks stop it as SIGTERM does
        }, "falkon-stdin-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
