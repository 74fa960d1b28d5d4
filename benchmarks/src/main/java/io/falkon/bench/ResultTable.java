package io.falkon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Rows of named values: printed as an aligned table, written as CSV and as JSON. */
public final class ResultTable {
    private final String title;
    private final List<String> columns;
    private final List<Map<String, Object>> rows = new ArrayList<>();
    private final Map<String, Object> meta = new LinkedHashMap<>();

    public ResultTable(String title, List<String> columns) {
        this.title = title;
        this.columns = List.copyOf(columns);
    }

    public void meta(String key, Object value) {
        meta.put(key, value);
    }

    public void add(Object... values) {
        if (values.length != columns.size()) {
            throw new IllegalArgumentException("expected " + columns.size() + " values, got " + values.length);
        }
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 0; i < values.length; i++) {
            row.put(columns.get(i), values[i]);
        }
        rows.add(row);
    }

    public List<Map<String, Object>> rows() {
        return rows;
    }

    private static String format(Object v) {
        if (v instanceof Double d) {
            return Math.abs(d) >= 100 ? String.format("%,.0f", d) : String.format("%.3f", d);
        }
        return String.valueOf(v);
    }

    public void print(PrintStream out) {
        int[] width = new int[columns.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = columns.get(i).length();
            for (Map<String, Object> r : rows) {
                width[i] = Math.max(width[i], format(r.get(columns.get(i))).length());
            }
        }
        out.println(title);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < width.length; i++) {
            sb.append(String.format("%" + width[i] + "s  ", columns.get(i)));
        }
        out.println(sb.toString().stripTrailing());
        for (Map<String, Object> r : rows) {
            sb.setLength(0);
            for (int i = 0; i < width.length; i++) {
                sb.append(String.format("%" + width[i] + "s  ", format(r.get(columns.get(i)))));
            }
            out.println(sb.toString().stripTrailing());
        }
    }

    /** Writes {@code NAME.csv} and {@code NAME.json} into {@code dir}. */
    public void write(Path dir, String name) throws IOException {
        Files.createDirectories(dir);
        StringBuilder csv = new StringBuilder(String.join(",", columns)).append('\n');
        for (Map<String, Object> r : rows) {
            List<String> cells = new ArrayList<>();
            for (String c : columns) {
                cells.add(String.valueOf(r.get(c)));
            }
            csv.append(String.join(",", cells)).append('\n');
        }
        Files.writeString(dir.resolve(name + ".csv"), csv);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("benchmark", name);
        doc.put("title", title);
        doc.put("meta", meta);
        doc.put("rows", rows);
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(dir.resolve(name + ".json").toFile(), doc);
    }
}
