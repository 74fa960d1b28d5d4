package io.falkon.dispatcher.core;

/**
 * Turns a {@link StatusSnapshot} into the status document a client receives (docs/protocol.md
 * section 7). A port, like {@link Journal}: the core copies its state and the dispatcher's renderer
 * writes the JSON, so the core needs no JSON library.
 */
public interface StatusRenderer {
    /** The dispatcher-wide document ({@code STATUS} for instance 0). */
    String dispatcher(StatusSnapshot snapshot);

    /** One instance's document. */
    String instance(StatusSnapshot.InstanceRow row);

    /**
     * The records' own text, for a scheduler that no client reads: one under test, or in a
     * benchmark. Not the protocol's JSON.
     */
    StatusRenderer RECORDS = new StatusRenderer() {
        @Override
        public String dispatcher(StatusSnapshot snapshot) {
            return snapshot.toString();
        }

        @Override
        public String instance(StatusSnapshot.InstanceRow row) {
            return row.toString();
        }
    };
}
