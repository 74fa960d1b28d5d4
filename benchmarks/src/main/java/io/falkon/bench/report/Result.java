package io.falkon.bench.report;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;

/** One benchmark's JSON as written by {@code ResultTable}: name, title, machine and run metadata, rows. */
record Result(String name, String title, Map<String, Object> meta, List<Map<String, Object>> rows) {

    static Result read(Path file) throws IOException {
        Map<String, Object> doc;
        try {
            doc = new ObjectMapper().readValue(file.toFile(), new TypeReference<Map<String, Object>>() { });
        } catch (IOException e) {
            throw new IOException(file + ": not a benchmark result: " + e.getMessage(), e);
        }
        Object rows = doc.get("rows");
        if (!(rows instanceof List<?>) || !(doc.get("title") instanceof String)) {
            throw new IOException(file + ": not a benchmark result (no \"title\" and \"rows\")");
        }
        String stem = file.getFileName().toString().replaceFirst("\\.json$", "");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> list = (List<Map<String, Object>>) rows;
        @SuppressWarnings("unchecked")
        Map<String, Object> meta = doc.get("meta") instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
        return new Result(stem, (String) doc.get("title"), meta, list);
    }

    List<String> columns() {
        Set<String> cols = new LinkedHashSet<>();
        rows.forEach(r -> cols.addAll(r.keySet()));
        return new ArrayList<>(cols);
    }

    List<Map<String, Object>> rows(Predicate<Map<String, Object>> which) {
        return rows.stream().filter(which).toList();
    }

    /** Rows grouped by a label, in the order the labels first appear. */
    static Map<String, List<Map<String, Object>>> group(List<Map<String, Object>> rows,
                                                         Function<Map<String, Object>, String> label) {
        Map<String, List<Map<String, Object>>> groups = new LinkedHashMap<>();
        rows.forEach(r -> groups.computeIfAbsent(label.apply(r), k -> new ArrayList<>()).add(r));
        return groups;
    }

    static double num(Map<String, Object> row, String column) {
        Object v = row.get(column);
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        if (v instanceof String s) {
            try {
                return Double.parseDouble(s);
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }
        return Double.NaN;
    }

    static String str(Map<String, Object> row, String column) {
        Object v = row.get(column);
        return v == null ? "" : String.valueOf(v);
    }

    /** "Intel Xeon ..., 2 cores, OpenJDK 17.0.15, 2026-11-22": what the figures were measured on. */
    String machine() {
        String date = String.valueOf(meta.getOrDefault("date", ""));
        return meta.getOrDefault("cpu", "unknown CPU") + ", " + meta.getOrDefault("cores", "?") + " cores, "
                + meta.getOrDefault("java", "unknown JVM") + ", max heap " + meta.getOrDefault("maxHeapMiB", "?")
                + " MiB" + (date.length() >= 10 ? ", " + date.substring(0, 10) : "");
    }
}
