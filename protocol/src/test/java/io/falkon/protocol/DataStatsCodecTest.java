package io.falkon.protocol;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** DATA_STATS grew twice (refetched, then bytesWritten): every form an executor may send is read. */
class DataStatsCodecTest {
    private static final DataStats FULL = new DataStats(3, 2, 1, 300, 200, 100, 4, 5_000_000_000L);

    @Test
    void theCurrentFormCarriesEveryField() {
        byte[] b = DataCodec.encodeStats(FULL);
        assertThat(b).hasSize(48);
        assertThat(DataCodec.decodeStats(b)).isEqualTo(FULL);
    }

    @Test
    void olderFormsReadAsZeroForWhatTheyLack() {
        byte[] b = DataCodec.encodeStats(FULL);
        assertThat(DataCodec.decodeStats(Arrays.copyOf(b, 40)))
                .isEqualTo(new DataStats(3, 2, 1, 300, 200, 100, 4, 0));
        assertThat(DataCodec.decodeStats(Arrays.copyOf(b, 36)))
                .isEqualTo(new DataStats(3, 2, 1, 300, 200, 100, 0, 0));
    }

    @Test
    void aTruncatedFieldIsRefused() {
        byte[] b = DataCodec.encodeStats(FULL);
        assertThatThrownBy(() -> DataCodec.decodeStats(Arrays.copyOf(b, 44))).isInstanceOf(ProtocolException.class);
    }

    @Test
    void sumsAddTheWrittenBytesToo() {
        assertThat(FULL.plus(FULL).bytesWritten()).isEqualTo(10_000_000_000L);
        assertThat(DataStats.ZERO.plus(FULL)).isEqualTo(FULL);
    }
}
