package io.falkon.dispatcher.core;

/** {@link Journal#NONE}: nothing kept, every batch sent at its commit. */
class NoJournalTest extends JournalContract {
    @Override
    protected Journal open() {
        return Journal.NONE;
    }
}
