package io.falkon.datacache.fetch;

import io.falkon.datacache.fetch.ObjectRef;
import io.falkon.datacache.fetch.PermanentFetchException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The shared store as files under its root ({@code --store DIR}), named relative to it. */
class StoreFileFetcherTest extends FetcherContract {
    @TempDir
    Path root;

    @Override
    Fetcher fetcher() {
        return new StoreFetcher(root, HttpClient.newHttpClient(), null);
    }

    @Override
    ObjectRef present(String id, byte[] bytes) throws Exception {
        Files.write(root.resolve(id + ".dat"), bytes);
        return ObjectRef.of(id, id + ".dat");
    }

    @Override
    ObjectRef absent(String id) {
        return ObjectRef.of(id, id + ".dat");
    }

    @Test
    void aMissingFileIsPermanentAndARelativeSourceStaysInsideTheRoot() {
        assertThatThrownBy(() -> fetcher().open(absent("gone"))).isInstanceOf(PermanentFetchException.class);
        assertThatThrownBy(() -> fetcher().open(ObjectRef.of("up", "../outside.dat")))
                .isInstanceOf(PermanentFetchException.class).hasMessageContaining("leaves the shared store root");
    }
}
