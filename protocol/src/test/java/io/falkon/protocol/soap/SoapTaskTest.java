package io.falkon.protocol.soap;

import io.falkon.protocol.TaskSpec;
import org.junit.jupiter.api.Test;

import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A task written as a SOAP {@code <task>} element reads back as the same spec. */
class SoapTaskTest {

    private static TaskSpec roundTrip(TaskSpec spec) throws Exception {
        StringWriter out = new StringWriter();
        XMLStreamWriter w = XMLOutputFactory.newFactory().createXMLStreamWriter(out);
        w.setPrefix(SoapXml.PREFIX, SoapXml.NS);
        SoapXml.writeTask(w, 7L, spec);
        w.close();
        String xml = out.toString().replaceFirst("<f:task", "<f:task xmlns:f=\"" + SoapXml.NS + "\"");
        XMLStreamReader r = XMLInputFactory.newFactory().createXMLStreamReader(new StringReader(xml));
        r.nextTag();
        SoapXml.ParsedTask parsed = SoapXml.readTask(r, "Submit", 0);
        assertThat(parsed.id()).isEqualTo(7L);
        return parsed.spec();
    }

    @Test
    void coresMemoryAndPriorityComeBackAsTheyWereStated() throws Exception {
        TaskSpec spec = TaskSpec.builder("xz", "-T2", "a.tar").priority(-4).resources(2, 512)
                .wallTime(Duration.ofSeconds(30)).build();
        assertThat(roundTrip(spec)).isEqualTo(spec);
        TaskSpec oneCore = TaskSpec.builder("/bin/true").resources(1, 0).build();
        assertThat(roundTrip(oneCore)).as("one core stated stays stated").isEqualTo(oneCore);
        TaskSpec plain = TaskSpec.of("/bin/true");
        assertThat(roundTrip(plain)).isEqualTo(plain);
        TaskSpec scratch = TaskSpec.builder("sort", "big").priority(2).resources(1, 64).disk(9000).build();
        assertThat(roundTrip(scratch)).isEqualTo(scratch);
        assertThat(roundTrip(TaskSpec.builder("sort").disk(10).build()).diskMiB()).isEqualTo(10);
        TaskSpec gpus = TaskSpec.builder("infer").namedResources(java.util.Map.of("gpus", 2, "license", 1)).build();
        assertThat(roundTrip(gpus)).as("<gpus> and <resource name=...>").isEqualTo(gpus);
    }

    @Test
    void aPersistentWorkerAndItsPayloadComeBackAsTheyWereStated() throws Exception {
        TaskSpec spec = TaskSpec.builder("count", "a.txt").worker(java.util.List.of("python3", "serve.py"),
                new byte[]{0, (byte) 0xff, '<', '&'}).build();
        assertThat(roundTrip(spec)).isEqualTo(spec);
        TaskSpec bare = TaskSpec.builder("true").worker(java.util.List.of("/opt/w"), new byte[0]).build();
        assertThat(roundTrip(bare)).isEqualTo(bare);
    }

    @Test
    void inputsAndOutputsComeBackWithTheirMarks() throws Exception {
        TaskSpec spec = TaskSpec.builder("mAdd", "-p", "corr", "cimages.tbl", "region.hdr", "mosaic.fits")
                .inputs(java.util.List.of(
                        new io.falkon.protocol.TaskInput("corr/t.fits", "corr/t.fits", 10, "", 0, "corr/", true),
                        io.falkon.protocol.TaskInput.of("cimages.tbl", "cimages.tbl"),
                        io.falkon.protocol.TaskInput.of("region.hdr", "region.hdr").asReadOnly()))
                .outputs(java.util.List.of(new io.falkon.protocol.TaskOutput("mosaic.fits", "mosaic.fits"),
                        new io.falkon.protocol.TaskOutput("area.fits", "tmp/area.fits", true)))
                .build();
        assertThat(roundTrip(spec)).isEqualTo(spec);
        assertThat(roundTrip(spec).inputs()).extracting(io.falkon.protocol.TaskInput::readOnly)
                .containsExactly(true, false, true);
    }

    @Test
    void aBadWorkerOrAPayloadWithoutOneIsRefusedNamingTheTask() {
        java.util.Map<String, String> bad = java.util.Map.of(
                "<f:worker></f:worker>", "<worker>: a worker command needs a program",
                "<f:worker><f:command>x</f:command></f:worker>", "<worker> holds only <arg> elements",
                "<f:payload>AAEC</f:payload>", "<payload> is for a persistent worker",
                "<f:worker><f:arg>w</f:arg></f:worker><f:payload>not base64!</f:payload>", "<payload> is not base64");
        bad.forEach((xml, why) -> {
            String task = "<f:task xmlns:f=\"" + SoapXml.NS + "\"><f:command>c</f:command>" + xml + "</f:task>";
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> {
                XMLStreamReader r = XMLInputFactory.newFactory().createXMLStreamReader(new StringReader(task));
                r.nextTag();
                SoapXml.readTask(r, "Submit", 3);
            }).as(xml).hasMessageContaining("task 3").hasMessageContaining(why);
        });
    }
}
