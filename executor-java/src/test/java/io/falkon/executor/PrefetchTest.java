package io.falkon.executor;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PrefetchTest {
    @Test
    void autoHoldsNothingUntilTasksAreSeenToBeShortThenFortyMillisecondsOfWorkPerSlot() {
        Prefetch p = new Prefetch(Prefetch.AUTO, 4, false);
        assertThat(p.initial()).isZero();
        for (int i = 0; i < 7; i++) {
            p.finished(2_000); // 2 ms
        }
        assertThat(p.adjust(7)).as("not enough seen yet").isZero();
        p.finished(2_000);
        assertThat(p.adjust(1)).as("2 ms tasks: twenty per slot hold 40 ms of work").isEqualTo(80);
        assertThat(p.current()).isEqualTo(80);
        assertThat(p.adjust(3)).isZero();
    }

    @Test
    void autoLetsGoWhenTasksGrowLongButNeverTakesBackMoreThanItReturns() {
        Prefetch p = new Prefetch(Prefetch.AUTO, 4, false);
        for (int i = 0; i < 8; i++) {
            p.finished(4_000);
        }
        assertThat(p.adjust(1)).as("4 ms tasks: ten per slot").isEqualTo(40);
        p.adjust(0);
        for (int i = 0; i < 50; i++) {
            p.finished(5_000_000); // 5 s tasks now
        }
        assertThat(p.adjust(1)).as("one credit returned: at most that is held back").isEqualTo(-1);
        assertThat(p.adjust(5)).isEqualTo(-5);
        assertThat(p.adjust(20)).isEqualTo(-20);
        assertThat(p.adjust(20)).as("the rest").isEqualTo(-14);
        assertThat(p.current()).isZero();
    }

    @Test
    void autoHoldsAtMostSixtyFourPerSlotHoweverShortTheTasks() {
        Prefetch p = new Prefetch(Prefetch.AUTO, 2, false);
        for (int i = 0; i < 8; i++) {
            p.finished(100); // 0.1 ms
        }
        assertThat(p.adjust(1)).isEqualTo(128);
    }

    @Test
    void autoHoldsNothingWithADataCacheAndAFixedValueIsKept() {
        Prefetch cached = new Prefetch(Prefetch.AUTO, 4, true);
        for (int i = 0; i < 20; i++) {
            cached.finished(1_000);
        }
        assertThat(cached.adjust(1)).isZero();
        Prefetch fixed = new Prefetch(16, 2, false);
        assertThat(fixed.initial()).isEqualTo(16);
        assertThat(fixed.adjust(1)).isZero();
    }
}
