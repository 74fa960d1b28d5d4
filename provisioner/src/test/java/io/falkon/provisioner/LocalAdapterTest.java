package io.falkon.provisioner;

import io.falkon.provisioner.lrm.LocalAdapter;
import org.junit.jupiter.api.AfterEach;

import java.time.Duration;

/** The local adapter (executor processes on this machine) against the adapter contract. */
class LocalAdapterTest extends LrmAdapterContract {
    private final LocalAdapter adapter = new LocalAdapter(Duration.ofMillis(200));

    @Override
    LrmAdapter adapter() {
        return adapter;
    }

    @AfterEach
    void stop() {
        adapter.close();
    }
}
