package io.falkon.transport.inprocess;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.LinkContract;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;


/**
 * The link of a client in the dispatcher's own process: its peer is the client's end, which gets
 * each batch as a list and hears the close with its reason. Against the real scheduler loop.
 */
class InProcessLinkTest extends LinkContract {
    private final SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
    private final Admission admission = new Admission(loop, Token.random(), 1 << 20);

    @AfterEach
    void stopLoop() {
        loop.close();
    }

    @Override
    protected Link open() {
        return InProcessClient.connect(admission, received::addAll, error -> {
            if (error != null) {
                received.add(error);
            }
            ended = true;
        }, () -> { }).link();
    }
}
