//! The balance a `lossless tap` report must strike: every frame read, written, dropped or
//! lost somewhere it is counted.

use serde_json::Value;

/// The accounting a TAP run's JSON must balance: frames read are frames the switch
/// received; its ledger balances; every frame it sent out of a port was written to the
/// TAP, failed (link down) or overran the writer's queue; and, where the kernel's counters
/// were read, the kernel counted as handed over exactly the frames the switch read (what
/// the host sent besides went to the ring's `host_tx_dropped`).
pub fn assert_accounted(r: &Value) {
    let sw = &r["switches"][0];
    let tap = &r["tap"];
    let u = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"));
    let ports = sw["ports"].as_array().unwrap();
    let rx: u64 = ports.iter().map(|p| u(&p["rx_packets"])).sum();
    let ordered: u64 = tap["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| u(&t["ordered_set_frames_read"]))
        .sum();
    // A super-frame (a host's segmentation offload) is one read and several frames.
    assert_eq!(
        u(&tap["read_frames"]) - u(&tap["segmented_frames"]) + u(&tap["segments"]),
        rx + ordered,
        "read = received: {tap}"
    );
    let l = &sw["ledger"];
    assert_eq!(
        u(&l["received"]),
        u(&l["consumed"]) + u(&l["dropped_on_receive"]) + u(&l["forwarded"]),
        "{l}"
    );
    assert_eq!(u(&l["copies"]), u(&l["refused"]) + u(&l["queued"]), "{l}");
    assert_eq!(
        u(&l["queued"]),
        u(&l["sent"]) + u(&l["dropped_from_queue"]) + u(&l["still_queued"]),
        "{l}"
    );
    let drops: u64 = sw["drops_by_reason"]
        .as_object()
        .unwrap()
        .values()
        .map(u)
        .sum();
    assert_eq!(
        drops,
        u(&l["dropped_on_receive"]) + u(&l["refused"]) + u(&l["dropped_from_queue"]),
        "{l}"
    );
    for (p, t) in ports.iter().zip(tap["ports"].as_array().unwrap()) {
        // Control ordered sets (a `link` port's CF_Updates and LLR messages) are frames to
        // the interface, line time to the switch's port; an LLR replay is a frame written
        // again, sent once by the port.
        let out = u(&t["written_frames"])
            - u(&t["ordered_set_frames_written"])
            - u(&t["replayed_frames"])
            + u(&t["write_errors"])
            + u(&t["write_overruns"]);
        assert_eq!(
            u(&p["tx_packets"]),
            out,
            "{} sent = written + failed: {t}",
            p["port"]
        );
        assert_eq!(
            u(&t["read_frames"]) - u(&t["segmented_frames"]) + u(&t["segments"]),
            u(&p["rx_packets"]) + u(&t["ordered_set_frames_read"]),
            "{t}"
        );
        if let Some(k) = t["kernel"].as_object() {
            // Frames the interface's kernel discarded before the socket (a cut VLAN tag)
            // are counted at exit as the difference; none on a TAP.
            let accounted = u(&t["read_frames"])
                + u(&k["host_tx_dropped"])
                + u(&t["oversize_frames"])
                + u(&t["kernel_discards"]);
            if t["device"] == "link" {
                // The switch at the other end may still be sending (its link protocols'
                // messages, an INIT to a peer that stopped): frames keep arriving after
                // the readers stop and before the counters are read last.
                assert!(u(&k["host_tx_packets"]) >= accounted, "{t}");
            } else {
                // An interface counts every frame it received; the socket's full ring
                // and oversize frames account for those the switch did not read. A TAP
                // counts what its host wrote. Either way, a frame the host sent after
                // the switch's last read is among those left unread at exit (which also
                // holds any sent after the counters' last reading).
                let accounted = if t["device"] == "iface" {
                    accounted
                } else {
                    u(&t["read_frames"])
                };
                let sent = u(&k["host_tx_packets"]);
                let unread = u(&t["unread_at_exit"]);
                assert!(
                    (accounted..=accounted + unread).contains(&sent),
                    "sent {sent}, accounted {accounted} + unread {unread}: {t}"
                );
            }
            assert!(u(&k["host_rx_packets"]) <= u(&t["written_frames"]), "{t}");
        }
    }
}
