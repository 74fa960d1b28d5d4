package io.falkon.datacache;

/** Where an object came from for one task. */
public enum Source {
    /** Already in this executor's cache. */
    LOCAL,
    /** Copied from a peer executor's cache. */
    PEER,
    /** Read from the persistent shared store. */
    STORE
}
