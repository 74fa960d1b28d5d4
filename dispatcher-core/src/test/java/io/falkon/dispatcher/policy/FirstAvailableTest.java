package io.falkon.dispatcher.policy;

import io.falkon.dispatcher.core.FakeLink;
import io.falkon.dispatcher.core.SchedulerHarness;
import org.junit.jupiter.api.Test;

import static io.falkon.dispatcher.core.SchedulerHarness.dispatched;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import io.falkon.protocol.ExtField;
import io.falkon.protocol.Message;
import java.util.List;

class FirstAvailableTest extends DispatchPolicyContract {
    @Override
    protected DispatchPolicy policy() {
        return new FirstAvailable();
    }

    @Test
    void takesTasksOldestFirst() {
        SchedulerHarness h = new SchedulerHarness(policy());
        FakeLink e = h.executor("e", 1, 1);
        FakeLink client = h.client("c");
        h.submit(client, 3);
        long first = dispatched(e).get(0).taskId();
        h.complete(e, List.of(new Message.DispatchedTask(first, 0, new byte[0],
                ExtField.NONE)));
        assertThat(dispatched(e).get(0).taskId()).isEqualTo(first + 1);
    }

    @Test
    void unknownPolicyNamesAreRefusedWithTheKnownOnes() {
        assertThatThrownBy(() -> DispatchPolicies.byName("fastest"))
                .hasMessageContaining("unknown dispatch policy 'fastest'").hasMessageContaining("first-available");
        assertThat(DispatchPolicies.byName("fa")).isInstanceOf(FirstAvailable.class);
    }
}
