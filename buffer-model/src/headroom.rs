//! How much PFC headroom a lossless PG needs: everything that can still arrive after the
//! XOFF decision (docs/physics.md, "Headroom").
//!
//! ```text
//! H_min = MTU            the frame that crossed the limit, admitted whole
//!       + MTU + 20       our transmitter may be busy with a frame toward the peer
//!       + 84             the PFC frame itself (64 + 20)
//!       + 2·C·t_prop     the pause travels to the peer, the last bits travel back
//!       + C·t_resp       the peer's response delay
//!       + MTU + 20       the peer finishes the frame it already started
//! ```

use crate::units::{Bytes, Rate, Time, WIRE_OVERHEAD};

/// The IEEE 802.3 (31B.3.7) bound on how long a station may keep starting frames after
/// receiving a pause, in pause quanta, for a port `speed` (SONiC's headroom tables use
/// these). Speeds between table rows take the next row up; above 400G the 400G value.
pub fn ieee_response_quanta(speed: Rate) -> u16 {
    let g = speed.bps() / 1_000_000_000;
    match g {
        0..=1 => 2,
        2..=10 => 67,
        11..=25 => 80,
        26..=40 => 118,
        41..=50 => 147,
        51..=100 => 394,
        101..=200 => 453,
        _ => 905,
    }
}

/// The terms of the minimum-headroom sum, in bytes, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomBudget {
    /// The frame that crossed the limit.
    pub crossing_frame: u64,
    /// A frame of ours already leaving toward the peer (PFC cannot pre-empt it).
    pub own_frame_in_flight: u64,
    /// The PFC frame on the wire.
    pub pfc_frame: u64,
    /// Round trip of the cable at line rate.
    pub cable_round_trip: u64,
    /// The peer's response delay at line rate.
    pub peer_response: u64,
    /// The frame the peer already started.
    pub peer_frame_in_flight: u64,
}

impl HeadroomBudget {
    /// Compute for a port of `speed`, one-way `propagation` delay, largest frame `mtu`
    /// (FCS included) and a peer that reacts within `response`.
    pub fn new(speed: Rate, propagation: Time, mtu: u32, response: Time) -> HeadroomBudget {
        let mtu = mtu as u64;
        HeadroomBudget {
            crossing_frame: mtu,
            own_frame_in_flight: mtu + WIRE_OVERHEAD,
            pfc_frame: 64 + WIRE_OVERHEAD,
            cable_round_trip: speed.bytes_in(propagation + propagation),
            peer_response: speed.bytes_in(response),
            peer_frame_in_flight: mtu + WIRE_OVERHEAD,
        }
    }

    /// With the peer's response at the IEEE bound for this speed.
    pub fn ieee(speed: Rate, propagation: Time, mtu: u32) -> HeadroomBudget {
        let response = speed.pause_time(ieee_response_quanta(speed));
        HeadroomBudget::new(speed, propagation, mtu, response)
    }

    /// Cells of headroom needed when everything that arrives after the XOFF decision is
    /// frames of `frame` bytes (FCS included), each taking `ceil(frame / cell)` cells: the
    /// frame that crossed, the frames the peer streams at line rate while our own frame,
    /// the PFC frame, the cable round trip and its response delay go by, and the frame it
    /// had already started.
    pub fn cells_for_frames(&self, frame: u64, cell: Bytes) -> u64 {
        let stream =
            self.own_frame_in_flight + self.pfc_frame + self.cable_round_trip + self.peer_response;
        let frames = stream.div_ceil(frame + WIRE_OVERHEAD) + 2;
        frames * frame.div_ceil(cell.get().max(1))
    }

    /// The worst case over every frame size from 64 bytes to `mtu`: (cells, frame size),
    /// the smallest such size among equals. Small frames each waste most of a cell, so
    /// this is usually the 64-byte case.
    ///
    /// Among sizes that take the same number of cells, the frame count only falls as the
    /// size grows, so only the smallest size of each cell count can be the worst: 64, and
    /// `(k − 1)·cell + 1` for k = 2, 3, … up to `mtu`.
    pub fn worst_cells(&self, mtu: u32, cell: Bytes) -> (u64, u32) {
        let mtu = mtu.max(64) as u64;
        let c = cell.get().max(1);
        let firsts = (2..=mtu.div_ceil(c))
            .map(|k| (k - 1) * c + 1)
            .filter(|f| *f > 64 && *f <= mtu);
        std::iter::once(64)
            .chain(firsts)
            .map(|f| (self.cells_for_frames(f, cell), f as u32))
            .max_by_key(|&(c, f)| (c, std::cmp::Reverse(f)))
            .expect("at least one frame size")
    }

    /// The sum: minimum headroom in bytes.
    pub fn total(&self) -> Bytes {
        Bytes(
            self.crossing_frame
                + self.own_frame_in_flight
                + self.pfc_frame
                + self.cable_round_trip
                + self.peer_response
                + self.peer_frame_in_flight,
        )
    }
}

/// What a lossless PG's headroom must hold, as two minimums: the physics formula in bytes
/// (frames of the MTU) rounded up to cells, and the worst frame size in cells (small
/// frames each take a whole cell). The larger one applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadroomNeed {
    /// The byte terms of the physics formula.
    pub budget: HeadroomBudget,
    /// Cell size.
    pub cell: Bytes,
    /// `budget.total()` rounded up to cells.
    pub mtu_cells: u64,
    /// Cells for the worst frame size.
    pub frame_cells: u64,
    /// That frame size (bytes, FCS included).
    pub frame: u32,
}

impl HeadroomNeed {
    /// For a port of `speed`, one-way `propagation`, largest frame `mtu`, cells of `cell`
    /// bytes and a peer reacting at the IEEE bound.
    pub fn ieee(speed: Rate, propagation: Time, mtu: u32, cell: Bytes) -> HeadroomNeed {
        let budget = HeadroomBudget::ieee(speed, propagation, mtu);
        let (frame_cells, frame) = budget.worst_cells(mtu, cell);
        HeadroomNeed {
            budget,
            cell,
            mtu_cells: budget.total().cells(cell),
            frame_cells,
            frame,
        }
    }

    /// The minimum that applies, in cells.
    pub fn cells(&self) -> u64 {
        self.mtu_cells.max(self.frame_cells)
    }

    /// The minimum that applies, in bytes (whole cells).
    pub fn bytes(&self) -> Bytes {
        Bytes(self.cells() * self.cell.get())
    }

    /// Does the cell count of small frames (rather than the byte formula) set the minimum?
    pub fn small_frames_apply(&self) -> bool {
        self.frame_cells > self.mtu_cells
    }
}

/// What SONiC's dynamic buffer model computes a lossless PG's headroom from (sonic-swss
/// `cfgmgr/buffer_headroom_mellanox.lua`, which `buffer_headroom_vs.lua` links to).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SonicHeadroom {
    /// Port speed.
    pub speed: Rate,
    /// Cable length in metres (light at 1.98e8 m/s, as the script has it).
    pub cable_m: f64,
    /// The PORT table's MTU (the IP MTU: the largest frame less 22 bytes).
    pub port_mtu: u32,
    /// The ASIC's cell.
    pub cell: Bytes,
    /// LOSSLESS_TRAFFIC_PATTERN `mtu`: the largest lossless packet (SONiC's default 1024).
    pub lossless_mtu: u32,
    /// LOSSLESS_TRAFFIC_PATTERN `small_packet_percentage` (SONiC's default 100).
    pub small_packet_percentage: u32,
    /// ASIC_TABLE `mac_phy_delay`, in bytes.
    pub mac_phy_delay: f64,
}

impl SonicHeadroom {
    /// SONiC's defaults for the traffic pattern and no MAC/PHY delay.
    pub fn new(speed: Rate, cable_m: f64, port_mtu: u32, cell: Bytes) -> SonicHeadroom {
        SonicHeadroom {
            speed,
            cable_m,
            port_mtu,
            cell,
            lossless_mtu: 1024,
            small_packet_percentage: 100,
            mac_phy_delay: 0.0,
        }
    }

    /// The script's `xoff`: the largest lossless packet plus, scaled by the worst cell
    /// occupancy of the traffic pattern, a port MTU, the cable both ways, the MAC/PHY
    /// delay and the peer's IEEE response time; rounded up to a KiB.
    pub fn xoff(&self) -> Bytes {
        let cell = self.cell.get() as f64;
        let small = 64.0;
        let worst = if cell > 2.0 * small {
            cell / small
        } else {
            2.0 * cell / (1.0 + cell)
        }
        .ceil();
        let pct = self.small_packet_percentage as f64;
        let by_byte =
            100.0 * small / ((pct * small + (100.0 - pct) * self.lossless_mtu as f64) / 100.0);
        let occupancy = (100.0 - by_byte + by_byte * worst) / 100.0;
        let response = ieee_response_quanta(self.speed) as f64 * 512.0 / 8.0;
        let cable = 2.0 * self.cable_m * self.speed.bps() as f64 / 198_000_000.0 / 8.0;
        let delay = self.port_mtu as f64 + cable + self.mac_phy_delay + response;
        let xoff = self.lossless_mtu as f64 + delay * occupancy;
        Bytes(((xoff / 1024.0).ceil() * 1024.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame size tried, one by one: the definition `worst_cells` shortens.
    fn worst_by_brute_force(b: &HeadroomBudget, mtu: u32, cell: Bytes) -> (u64, u32) {
        (64..=mtu.max(64))
            .map(|f| (b.cells_for_frames(f as u64, cell), f))
            .max_by_key(|&(c, f)| (c, std::cmp::Reverse(f)))
            .unwrap()
    }

    #[test]
    fn worst_cells_equals_trying_every_frame_size() {
        for speed in [1, 10, 25, 40, 100, 400] {
            for metres in [0, 2, 40, 300, 2000] {
                for mtu in [64, 65, 100, 1518, 4200, 9216] {
                    for cell in [64, 80, 128, 208, 254, 256, 1024] {
                        let b =
                            HeadroomBudget::ieee(Rate::gbps(speed), Time::from_ns(5 * metres), mtu);
                        assert_eq!(
                            b.worst_cells(mtu, Bytes(cell)),
                            worst_by_brute_force(&b, mtu, Bytes(cell)),
                            "{speed}G {metres}m mtu {mtu} cell {cell}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sonic_dynamic_headroom_by_hand() {
        // 100G, 300 m, port MTU 9100, 208-byte cells: worst occupancy ⌈208/64⌉ = 4 (every
        // packet small); cable 2·300·1e11 / 1.98e8 / 8 = 37,878.8 B; response 394·64 =
        // 25,216 B; 1024 + 4·(9100 + 37,878.8 + 25,216) = 289,803 B → 283.01 KiB → 290,816.
        let h = SonicHeadroom::new(Rate::gbps(100), 300.0, 9100, Bytes(208));
        assert_eq!(h.xoff(), Bytes(290_816));
        // Half the packets small (by count) and 4 KiB lossless packets: 64-byte packets
        // are 100·64/((50·64 + 50·4096)/100) = 3.08 % of the bytes, occupancy 1.092.
        let h = SonicHeadroom {
            small_packet_percentage: 50,
            lossless_mtu: 4096,
            ..SonicHeadroom::new(Rate::gbps(100), 5.0, 9100, Bytes(208))
        };
        let by_byte: f64 = 6400.0 / 2080.0;
        let occ = (100.0 - by_byte + by_byte * 4.0) / 100.0;
        let cable = 2.0 * 5.0 * 1e11 / 1.98e8 / 8.0;
        let want = ((4096.0 + (9100.0 + cable + 25216.0) * occ) / 1024.0).ceil() * 1024.0;
        assert_eq!(h.xoff(), Bytes(want as u64));
    }

    #[test]
    fn headroom_at_100g_2m_1518_matches_physics() {
        let b = HeadroomBudget::ieee(Rate::gbps(100), Time::from_ns(10), 1518);
        assert_eq!(b.cable_round_trip, 250);
        assert_eq!(b.peer_response, 25_216);
        assert_eq!(b.total(), Bytes(1518 + 1538 + 84 + 250 + 25_216 + 1538));
        assert!((b.total().get() as f64 / 1000.0 - 30.1).abs() < 0.1);
        let instant = HeadroomBudget::new(Rate::gbps(100), Time::from_ns(10), 1518, Time::ZERO);
        assert!((instant.total().get() as f64 / 1000.0 - 4.9).abs() < 0.1);
    }

    #[test]
    fn small_frames_need_more_headroom_in_cells() {
        // After XOFF at 100G, 2 m, MTU 1518, IEEE response: 1538 + 84 + 250 + 25,216 =
        // 27,088 bytes of wire time stream in; as 64-byte frames (84 on the wire) that is
        // 323 frames, plus the crossing frame and the peer's started one: 325 frames of one
        // 256-byte cell each = 83,200 bytes, against 30,144 bytes for 1518-byte frames.
        let b = HeadroomBudget::ieee(Rate::gbps(100), Time::from_ns(10), 1518);
        let cell = Bytes(256);
        assert_eq!(b.cells_for_frames(64, cell), 325);
        // 1518-byte frames: ceil(27,088 / 1,538) + 2 = 20 frames of 6 cells.
        assert_eq!(b.cells_for_frames(1518, cell), 120);
        assert_eq!(b.worst_cells(1518, cell), (325, 64));
        // With 64-byte cells a 64-byte frame wastes nothing: MTU frames are the worst.
        let (cells, frame) = b.worst_cells(1518, Bytes(64));
        assert!(
            frame > 64 && cells * 64 >= b.total().get(),
            "{cells} {frame}"
        );
    }

    #[test]
    fn ieee_quanta_table() {
        for (g, q) in [
            (10, 67),
            (25, 80),
            (40, 118),
            (50, 147),
            (100, 394),
            (200, 453),
            (400, 905),
        ] {
            assert_eq!(ieee_response_quanta(Rate::gbps(g)), q);
        }
        assert_eq!(Rate::gbps(100).pause_time(394), Time(2_017_280));
    }
}
