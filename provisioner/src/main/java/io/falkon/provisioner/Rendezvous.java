package io.falkon.provisioner;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * How the nodes of one allocation in the tiered layout find each other, through the work directory
 * they share with the provisioner (a shared file system, as on every cluster the papers used): the
 * first node to create {@code NAME.lead} runs the allocation's dispatcher and publishes its address
 * in {@code NAME.dispatcher}; the others wait for that file and point their executors at it; the
 * provisioner reads it into the dispatchers file clients follow. Files are replaced atomically, so a
 * reader sees a whole address or none.
 */
public final class Rendezvous {
    private static final long POLL_MILLIS = 100;

    private final Path lead;
    private final Path address;

    /** The rendezvous of allocation {@code name} in {@code dir}. */
    public Rendezvous(Path dir, String name) {
        this.lead = dir.resolve(name + ".lead");
        this.address = dir.resolve(name + ".dispatcher");
    }

    /** Whether this node is the first to ask, and so runs the dispatcher (exactly one node is). */
    public boolean claimLead() throws IOException {
        try {
            Files.createFile(lead);
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        }
    }

    /** The lead's dispatcher listens at {@code hostPort}. */
    public void publish(String hostPort) throws IOException {
        writeAtomically(address, List.of(hostPort));
    }

    /** The lead's dispatcher has stopped: nobody should be pointed at it any more. */
    public void withdraw() throws IOException {
        Files.deleteIfExists(address);
        Files.deleteIfExists(lead);
    }

    /** The published address, if the dispatcher has published one. */
    public Optional<String> address() throws IOException {
        try {
            return Files.readAllLines(address).stream().map(String::strip).filter(s -> !s.isEmpty()).findFirst();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /**
     * Waits for the lead to publish its address (polling the shared file system: there is nothing
     * else to wait on across nodes).
     *
     * @throws IOException if none appears within {@code limit}
     */
    public String awaitAddress(Duration limit) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            Optional<String> a = address();
            if (a.isPresent()) {
                return a.get();
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no dispatcher address in " + address + " after " + limit.toSeconds() + " s");
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    /** Replaces {@code file} with {@code lines} in one step (write beside it, then rename over it). */
    static void writeAtomically(Path file, List<String> lines) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, lines);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
