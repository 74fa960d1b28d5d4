package io.falkon.protocol.auth;

import io.falkon.protocol.fs.OwnerOnly;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where a Falkon process finds the deployment's token, the same way in every command:
 * <ol>
 *   <li>{@code --token VALUE} (visible to {@code ps}: for tests and scripts, not for production);</li>
 *   <li>{@code --token-file FILE};</li>
 *   <li>the environment variable {@value #ENV} ({@value #ENV_FILE} naming a file);</li>
 *   <li>the default file {@code $FALKON_HOME/token} ({@code ~/.falkon/token}), readable by its owner only.</li>
 * </ol>
 * A dispatcher that finds none generates one and writes it to the default file (the way Jupyter
 * writes its token), so that clients and executors of the same user find it there, on this node or
 * on any node sharing the home directory.
 */
public final class TokenSource {
    public static final String ENV = "FALKON_TOKEN";
    public static final String ENV_FILE = "FALKON_TOKEN_FILE";
    public static final String ENV_HOME = "FALKON_HOME";

    private final Map<String, String> env;
    private final Path home;

    TokenSource(Map<String, String> env, Path userHome) {
        this.env = env;
        String h = env.get(ENV_HOME);
        this.home = h != null && !h.isEmpty() ? Path.of(h) : userHome.resolve(".falkon");
    }

    /** The process's own environment and home directory. */
    public static TokenSource system() {
        return new TokenSource(System.getenv(), userHome(System.getenv(), System.getProperty("user.home")));
    }

    /**
     * The user's home directory as every Unix tool (and Falkon's C executor and Python client) finds
     * it: {@code $HOME} when it is set, else the password database's entry ({@code passwd}, which is
     * what the JVM's {@code user.home} holds). With {@code HOME} set, as in CI, containers and
     * sandboxes, the two differ, and every component must read the same token file.
     */
    static Path userHome(Map<String, String> env, String passwdHome) {
        String h = env.get("HOME");
        return Path.of(h != null && !h.isEmpty() ? h : passwdHome);
    }

    /**
     * Falkon's directory of this user: {@code $FALKON_HOME}, else {@code $HOME/.falkon} (see
     * {@link #userHome}).
     */
    public Path home() {
        return home;
    }

    /** {@code $FALKON_HOME/token}. */
    public Path defaultFile() {
        return home.resolve("token");
    }

    /** What was found, and where (for messages). */
    public record Found(Token token, String from) {
    }

    /**
     * The token a client or executor presents: from the option, the file option, the environment or
     * the default file; {@link Token#none()} when there is none anywhere (a dispatcher that requires
     * one then refuses, saying so).
     *
     * @throws IllegalArgumentException if a named file cannot be read or holds no token
     */
    public Found forClient(String option, Path fileOption) {
        Found f = explicit(option, fileOption);
        if (f != null) {
            return f;
        }
        Path def = defaultFile();
        if (Files.isReadable(def)) {
            return new Found(read(def), def.toString());
        }
        return new Found(Token.none(), "nowhere");
    }

    /**
     * The token a dispatcher requires: explicit sources first; else the default file, created with a
     * new random token when it does not exist.
     */
    public Found forServer(String option, Path fileOption) {
        Found f = explicit(option, fileOption);
        if (f != null) {
            return f;
        }
        Path def = defaultFile();
        if (Files.exists(def)) {
            return new Found(read(def), def.toString());
        }
        Token t = Token.random();
        try {
            write(def, t);
        } catch (FileAlreadyExistsException e) {
            return new Found(read(def), def.toString()); // another process made it first: share it
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot write a new token to " + def + ": " + e.getMessage()
                    + " (give one with --token-file, or set " + ENV_HOME + ")", e);
        }
        return new Found(t, def + " (new)");
    }

    private Found explicit(String option, Path fileOption) {
        if (option != null && !option.isEmpty()) {
            return new Found(Token.of(option), "--token");
        }
        if (fileOption != null) {
            return new Found(read(fileOption), fileOption.toString());
        }
        String v = env.get(ENV);
        if (v != null && !v.isEmpty()) {
            return new Found(Token.of(v.strip()), "$" + ENV);
        }
        String file = env.get(ENV_FILE);
        if (file != null && !file.isEmpty()) {
            return new Found(read(Path.of(file)), file);
        }
        return null;
    }

    /** Reads a token file: its first line, trimmed. */
    public static Token read(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the token file " + file + ": " + e.getMessage(), e);
        }
        int nl = text.indexOf('\n');
        String value = (nl < 0 ? text : text.substring(0, nl)).strip();
        if (value.isEmpty()) {
            throw new IllegalArgumentException("the token file " + file + " is empty");
        }
        return Token.of(value);
    }

    /** Writes {@code t} to a new file readable by its owner only (its directory too). */
    public static void write(Path file, Token t) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        OwnerOnly.directories(dir);
        Path tmp = OwnerOnly.tempFile(dir, ".token", ".tmp");
        try {
            Files.writeString(tmp, t.value() + "\n", StandardCharsets.US_ASCII);
            try {
                Files.createLink(file, tmp); // fails if the file exists: never overwrite another process's token
            } catch (UnsupportedOperationException e) {
                Files.move(tmp, file); // no hard links on this file system: a plain move, refusing to replace
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
