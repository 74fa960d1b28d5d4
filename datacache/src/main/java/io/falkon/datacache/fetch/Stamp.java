package io.falkon.datacache.fetch;

/**
 * What a shared-store file looked like when a copy was made of it: its size and modification
 * time. A cached copy is stale when the file no longer matches (see {@link Revalidate}).
 */
public record Stamp(long size, long mtimeMillis) {
}
