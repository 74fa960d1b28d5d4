package io.falkon.provisioner;

import io.falkon.provisioner.lrm.LocalAdapter;
import org.junit.jupiter.api.AfterEach;

import java.time.Duration;

/** Provisioning end to end on this machine, with an emulated allocation latency of 0.5 s. */
class LocalProvisioningTest extends ProvisioningContract {
    private final LocalAdapter adapter = new LocalAdapter(Duration.ofMillis(500));

    @Override
    LrmAdapter adapter() {
        return adapter;
    }

    @Override
    int maxNodes() {
        return 3;
    }

    @AfterEach
    void stop() {
        adapter.close();
    }
}
