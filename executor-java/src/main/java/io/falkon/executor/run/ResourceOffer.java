package io.falkon.executor.run;

import io.falkon.protocol.NamedResources;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One named resource an executor offers (docs/cli.md "GPUs and other resources"): devices with
 * indices ({@code --resource gpus=0,1,2,3}) or a count without them ({@code --resource license=4}).
 * GPUs are found by themselves when {@code --resource gpus=...} is not given ({@link #detectGpus}).
 * The C executor reads the same option the same way ({@code resources.c}).
 *
 * @param name    the resource's canonical name ({@link NamedResources#nameProblem})
 * @param devices the device indices handed to tasks, or null for a counted resource
 * @param amount  how many units: the number of devices, or the count
 * @param vendor  for {@code gpus}: {@link Vendor#AMD} when they are ROCm devices, else {@link Vendor#NVIDIA}
 */
public record ResourceOffer(String name, List<String> devices, long amount, Vendor vendor) {

    /** Whose variables hand a {@code gpus} device over. */
    public enum Vendor {
        /** {@code CUDA_VISIBLE_DEVICES}; also devices given by hand. */
        NVIDIA,
        /** {@code ROCR_VISIBLE_DEVICES} and {@code HIP_VISIBLE_DEVICES}. */
        AMD
    }

    /** Most devices of one resource. */
    public static final int MAX_DEVICES = 1024;
    private static final Pattern DEVICE = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    private static final Pattern NVIDIA_LINE = Pattern.compile("^GPU (\\d+):");
    private static final Pattern AMD_LINE = Pattern.compile("^GPU\\[(\\d+)]");

    public ResourceOffer {
        if (devices != null) {
            devices = List.copyOf(devices);
        }
    }

    /**
     * {@code NAME=0,1,2} or {@code NAME=[3]} (devices), {@code NAME=N} (a count), {@code NAME=0} (none:
     * turns off finding GPUs). Throws {@link IllegalArgumentException} naming what is wrong.
     */
    public static ResourceOffer parse(String option) {
        int eq = option.indexOf('=');
        if (eq < 0) {
            throw new IllegalArgumentException("--resource " + option + ": expected NAME=INDICES or NAME=COUNT, "
                    + "e.g. gpus=0,1,2,3 or license=4");
        }
        String name = option.substring(0, eq);
        String problem = NamedResources.nameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("--resource " + option + ": " + problem);
        }
        String value = option.substring(eq + 1).strip();
        boolean bracketed = value.startsWith("[") && value.endsWith("]");
        if (!bracketed && !value.contains(",")) {
            long n;
            try {
                n = Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--resource " + option + ": '" + value + "' is neither a count "
                        + "nor a list of device indices (one device: " + name + "=[" + value + "])");
            }
            if (n < 0 || n > NamedResources.MAX_AMOUNT) {
                throw new IllegalArgumentException("--resource " + option + ": the count must be 0.."
                        + NamedResources.MAX_AMOUNT);
            }
            return new ResourceOffer(name, null, n, Vendor.NVIDIA);
        }
        String list = bracketed ? value.substring(1, value.length() - 1) : value;
        LinkedHashSet<String> devices = new LinkedHashSet<>();
        for (String d : list.split(",")) {
            String dev = d.strip();
            if (dev.isEmpty()) {
                continue; // "0," is one device
            }
            if (!DEVICE.matcher(dev).matches()) {
                throw new IllegalArgumentException("--resource " + option + ": device '" + dev
                        + "' is not an index or id ([A-Za-z0-9_.:-], at most 64 characters)");
            }
            if (!devices.add(dev)) {
                throw new IllegalArgumentException("--resource " + option + ": device " + dev + " is given twice");
            }
        }
        if (devices.size() > MAX_DEVICES) {
            throw new IllegalArgumentException("--resource " + option + ": at most " + MAX_DEVICES + " devices");
        }
        return new ResourceOffer(name, new ArrayList<>(devices), devices.size(), Vendor.NVIDIA);
    }

    /**
     * The GPUs this node gives its tasks, or null for none. An inherited {@code CUDA_VISIBLE_DEVICES}
     * or {@code ROCR_VISIBLE_DEVICES} (a batch scheduler's allocation) is the set, never widened;
     * else the devices {@code nvidia-smi -L}, then {@code rocm-smi --showid}, list.
     */
    public static ResourceOffer detectGpus(Map<String, String> env) {
        String cuda = env.get("CUDA_VISIBLE_DEVICES");
        if (cuda != null) {
            return fromVariable(cuda, Vendor.NVIDIA);
        }
        String rocr = env.get("ROCR_VISIBLE_DEVICES");
        if (rocr != null) {
            return fromVariable(rocr, Vendor.AMD);
        }
        String path = env.getOrDefault("PATH", "/bin:/usr/bin");
        List<String> nvidia = indices(path, "nvidia-smi", "-L", NVIDIA_LINE);
        if (!nvidia.isEmpty()) {
            return new ResourceOffer(NamedResources.GPUS, nvidia, nvidia.size(), Vendor.NVIDIA);
        }
        List<String> amd = indices(path, "rocm-smi", "--showid", AMD_LINE);
        return amd.isEmpty() ? null : new ResourceOffer(NamedResources.GPUS, amd, amd.size(), Vendor.AMD);
    }

    /** A visible-devices variable's devices; none when it is empty or hides them all. */
    static ResourceOffer fromVariable(String value, Vendor vendor) {
        List<String> devices = new ArrayList<>();
        for (String d : value.split(",")) {
            String dev = d.strip();
            // "-1" and NoDevFiles are how CUDA and Slurm say "no device"
            if (dev.isEmpty() || dev.startsWith("-") || dev.equals("NoDevFiles") || !DEVICE.matcher(dev).matches()) {
                return devices.isEmpty() ? null : new ResourceOffer(NamedResources.GPUS, devices, devices.size(), vendor);
            }
            if (!devices.contains(dev)) {
                devices.add(dev);
            }
        }
        return devices.isEmpty() ? null : new ResourceOffer(NamedResources.GPUS, devices, devices.size(), vendor);
    }

    /**
     * The executable called {@code tool} in the first of {@code path}'s directories that has one (an
     * empty entry is the current directory, as for a shell), or null.
     */
    static Path onPath(String path, String tool) {
        for (String dir : path.split(":", -1)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * The indices a vendor's tool lists (its lines matching {@code line}), none when it is absent or
     * fails. The tool is looked for on PATH first: a node without it (most nodes) starts no process,
     * as the C executor (docs/benchmarks.md, "The last places a peer is faster (issue 58): a third pass").
     */
    private static List<String> indices(String path, String tool, String option, Pattern line) {
        Path exe = onPath(path, tool);
        if (exe == null) {
            return List.of();
        }
        try {
            Process p = new ProcessBuilder(exe.toString(), option).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            String out = new String(p.getInputStream().readNBytes(1 << 20), StandardCharsets.UTF_8);
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return List.of();
            }
            if (p.exitValue() != 0) {
                return List.of();
            }
            LinkedHashSet<String> found = new LinkedHashSet<>();
            for (String l : out.split("\n")) {
                Matcher m = line.matcher(l.strip());
                if (m.find()) {
                    found.add(m.group(1));
                }
            }
            return new ArrayList<>(found);
        } catch (IOException e) {
            return List.of(); // no such tool here
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** {@code gpus=0,1} or {@code license=4}: how it is shown in the executor's log. */
    @Override
    public String toString() {
        return name + "=" + (devices == null ? Long.toString(amount) : "[" + String.join(",", devices) + "]");
    }
}
