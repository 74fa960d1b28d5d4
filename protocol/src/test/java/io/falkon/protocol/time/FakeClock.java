package io.falkon.protocol.time;

/** A clock that moves only when told to: read on any thread, advanced by one (the test's). */
public final class FakeClock implements Clock {
    private volatile long micros;

    public FakeClock(long startMicros) {
        this.micros = startMicros;
    }

    @Override
    public long nowMicros() {
        return micros;
    }

    public void advanceMillis(long ms) {
        micros += ms * 1000;
    }
}
