package io.falkon.transport.ws;

import io.falkon.dispatcher.admission.Admission;
import io.falkon.dispatcher.core.Scheduler;
import io.falkon.dispatcher.core.SchedulerLoop;
import io.falkon.dispatcher.policy.FirstAvailable;
import io.falkon.protocol.auth.Token;
import io.falkon.protocol.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The service is made before its port is bound and learns its address after: a caller who comes
 * in between (the port listens, the address is not known yet) is told to retry, never left without
 * an answer. Against the real scheduler loop and the Axis2 engine.
 */
class WsServiceStartTest {
    private static final String PATH = "/axis2/services/Falkon";
    private final SchedulerLoop loop = new SchedulerLoop(new Scheduler(new FirstAvailable(), Clock.SYSTEM, "d")).start();
    private final Token token = Token.random();
    private final Admission admission = new Admission(loop, token, 1 << 20);
    private final ExecutorService workers = Executors.newSingleThreadExecutor();

    @AfterEach
    void stop() {
        loop.close();
        workers.shutdownNow();
    }

    private WsService.Request wsdlRequest() {
        return new WsService.Request("GET", PATH, "wsdl", null, null, "Bearer " + token.value(), null, new byte[0],
                "test");
    }

    @Test
    void aCallerBeforeTheAddressIsKnownIsToldToRetryAndAnsweredOnceItIs() throws Exception {
        WsService service = new WsService(new WsGateway(admission, WsTransport.Settings.defaults(), workers), PATH);

        WsService.Response early = service.serve(wsdlRequest()).get(30, TimeUnit.SECONDS);
        assertThat(early.status()).isEqualTo(503);
        assertThat(early.headers()).containsEntry("Retry-After", "1");
        assertThat(new String(early.body(), StandardCharsets.UTF_8)).contains("starting");

        byte[] wsdl = "<definitions/>".getBytes(StandardCharsets.UTF_8);
        service.publish("http://127.0.0.1:1" + PATH, wsdl);
        WsService.Response later = service.serve(wsdlRequest()).get(30, TimeUnit.SECONDS);
        assertThat(later.status()).isEqualTo(200);
        assertThat(later.body()).isEqualTo(wsdl);
    }
}
