package io.falkon.datacache;

/**
 * When a cached copy is checked against the shared store before a task uses it (a task that
 * declares a size or checksum always has the copy checked against them).
 */
public enum Revalidate {
    /**
     * Never: an id names the same bytes for ever (the papers' write-once model); a changed store
     * file needs a new id, or a declared checksum.
     */
    NEVER,
    /**
     * On every use, one {@code stat} of the store file: a different size or modification time makes
     * the copy stale, and it is fetched again. Sources that are not files (HTTP) are not
     * revalidated.
     */
    STAT;

    public static Revalidate parse(String s) {
        return switch (s.toLowerCase()) {
            case "never" -> NEVER;
            case "stat" -> STAT;
            default -> throw new IllegalArgumentException("unknown revalidation '" + s + "' (never, stat)");
        };
    }
}
