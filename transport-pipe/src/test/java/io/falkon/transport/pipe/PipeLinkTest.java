package io.falkon.transport.pipe;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.core.Journal;
import io.falkon.dispatcher.core.Link;
import io.falkon.dispatcher.core.LinkContract;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerConfig;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.Message;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;

import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/** The link over a real pair of pipes: the child's side reads the frames it is sent with the protocol's codec. */
class PipeLinkTest extends LinkContract {
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private SchedulerLoop loop;
    private Child child;
    private PipeConnection connection;

    @AfterEach
    void stop() throws IOException {
        if (child != null) {
            child.exit();
        }
        if (connection != null) {
            connection.closeAfterWrites();
        }
        if (child != null) {
            child.close();
        }
        timer.shutdownNow();
        if (loop != null) {
            loop.close();
        }
    }

    @Override
    protected Link open() throws Exception {
        loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d", SchedulerConfig.defaults(),
                Journal.NONE)).start();
        child = new Child();
        connection = new PipeConnection("child", 0, child.fromChild, child.toChild,
                new PipeTransport.Settings("d-link", 1 << 20, 60_000), new Admission(loop, Token.of("t"), 1 << 20),
                timer, c -> { });
        connection.start();
        Thread peer = new Thread(() -> {
            try {
                for (Message m = child.read(); m != null; m = child.read()) {
                    received.add(m);
                }
            } catch (IOException e) {
                // the pipe broke: ended all the same
            }
            ended = true;
        }, "pipe-link-test-child");
        peer.setDaemon(true);
        peer.start();
        return connection.link();
    }
}
