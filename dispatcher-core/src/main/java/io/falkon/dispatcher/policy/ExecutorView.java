package io.falkon.dispatcher.policy;

/** A registered executor, as a policy sees it. */
public interface ExecutorView {

    String id();

    String host();

    /** How many tasks it runs at once. */
    int slots();

    /** Free slots it has offered and the dispatcher has not yet filled. */
    int credits();

    /** Tasks dispatched to it whose results have not come back. */
    int running();
}
