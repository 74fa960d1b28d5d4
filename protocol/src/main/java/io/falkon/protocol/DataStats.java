package io.falkon.protocol;

/**
 * Where a task's inputs came from (the {@link ExtTags#DATA_STATS} extension of an Execution), also
 * used for sums over many tasks.
 *
 * @param localHits  inputs already in the executor's cache
 * @param peerHits   inputs copied from a peer executor's cache
 * @param misses     inputs read from the shared store
 * @param bytesLocal bytes of the local hits
 * @param bytesPeer  bytes copied from peers
 * @param bytesStore bytes read from the shared store
 * @param refetched  cached copies found stale (the store changed, or they did not match the size or
 *                   checksum the task declared) and fetched again; each is also counted where the
 *                   new copy came from
 * @param bytesWritten bytes of the task's declared outputs written to the shared store: with
 *                   {@code bytesStore}, the traffic the store carries for it
 */
public record DataStats(long localHits, long peerHits, long misses, long bytesLocal, long bytesPeer,
                        long bytesStore, long refetched, long bytesWritten) {
    public static final DataStats ZERO = new DataStats(0, 0, 0, 0, 0, 0, 0, 0);

    public DataStats(long localHits, long peerHits, long misses, long bytesLocal, long bytesPeer, long bytesStore) {
        this(localHits, peerHits, misses, bytesLocal, bytesPeer, bytesStore, 0, 0);
    }

    public DataStats(long localHits, long peerHits, long misses, long bytesLocal, long bytesPeer, long bytesStore,
                     long refetched) {
        this(localHits, peerHits, misses, bytesLocal, bytesPeer, bytesStore, refetched, 0);
    }

    public DataStats plus(DataStats o) {
        return new DataStats(localHits + o.localHits, peerHits + o.peerHits, misses + o.misses,
                bytesLocal + o.bytesLocal, bytesPeer + o.bytesPeer, bytesStore + o.bytesStore,
                refetched + o.refetched, bytesWritten + o.bytesWritten);
    }

    public long accesses() {
        return localHits + peerHits + misses;
    }
}
