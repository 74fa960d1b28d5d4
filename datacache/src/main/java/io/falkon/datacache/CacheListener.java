package io.falkon.datacache;

/** Told about changes to a cache's contents (objects in their stored form only). */
public interface CacheListener {
    void added(String id, long size);

    void removed(String id);

    CacheListener NONE = new CacheListener() {
        @Override
        public void added(String id, long size) {
        }

        @Override
        public void removed(String id) {
        }
    };
}
