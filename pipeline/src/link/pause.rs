//! PFC and 802.3x PAUSE on one port, both ways: the pauses the peer asked for (received
//! frames load [`PauseTimers`]) and the pauses this end asks for ([`PfcGenerator`]: XOFF
//! and XON requests of the buffer become frames that go out ahead of everything else,
//! refreshed every half pause time).
//!
//! With PAUSE the same requests speak for the whole link: the XOFF of any priority is a
//! PAUSE of the link, and only the last XON resumes it.

use crate::config::FlowControl;
use crate::counters::PortCounters;
use crate::drop_reason::DropReason;
use crate::link::control::ControlFrame;
use lossless_buffer_model::pfc::{PauseTimers, PfcGenerator, PfcRequest};
use lossless_buffer_model::{Rate, Time, PRIORITIES};

/// What a port does with a PFC frame that speaks for none of the priorities it honours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unhonoured {
    /// Drop it, counted as `pfc_not_enabled` (a switch port).
    Drop,
    /// Count it as received and do nothing (a NIC's counters see every PFC frame).
    Count,
}

/// How a port's PFC or PAUSE is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseSetup {
    /// PFC per priority, or 802.3x PAUSE of the whole link.
    pub mode: FlowControl,
    /// How long after a frame arrives it takes effect (frames may still start until then).
    pub response: Time,
    /// Quanta carried by this port's XOFF frames.
    pub quanta: u16,
    /// Priorities whose received pause this port obeys.
    pub honoured: u8,
    /// Obey received pauses (false: count them only, as a host that ignores PFC).
    pub obey: bool,
    /// A PFC frame for none of the honoured priorities.
    pub unhonoured: Unhonoured,
}

/// What a control frame received did, for the owner's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heard {
    /// A PFC frame, its class-enable vector masked to the honoured priorities.
    Pfc {
        /// Priorities it spoke for that this port honours.
        enable: u8,
        /// Pause time per priority.
        quanta: [u16; PRIORITIES],
    },
    /// An 802.3x PAUSE frame.
    Pause {
        /// Pause time of the whole link.
        quanta: u16,
    },
    /// A CBFC credit message.
    Credit,
    /// An LLR control ordered set.
    Retry,
}

/// PFC or PAUSE state of one port.
#[derive(Clone, Debug)]
pub struct PauseLink {
    setup: PauseSetup,
    /// Pause timers set by the frames this port received (what the peer asked for).
    pub(super) timers: PauseTimers,
    /// The priorities this port holds in XOFF toward its peer.
    generator: PfcGenerator,
}

impl PauseLink {
    /// The PFC or PAUSE state of a port at `speed`.
    pub fn new(speed: Rate, setup: PauseSetup) -> PauseLink {
        PauseLink {
            timers: PauseTimers::new(speed, setup.response),
            generator: PfcGenerator::new(speed, setup.quanta),
            setup,
        }
    }

    /// PFC or PAUSE.
    pub fn mode(&self) -> FlowControl {
        self.setup.mode
    }

    /// Ask the peer to stop sending the priorities in `mask`.
    pub fn send_xoff(&mut self, mask: u8) {
        self.generator.send_xoff(mask);
    }

    /// Let the peer resume the priorities in `mask`.
    pub fn send_xon(&mut self, mask: u8) {
        self.generator.send_xon(mask);
    }

    /// Priorities this port holds in XOFF toward its peer.
    pub fn xoff_mask(&self) -> u8 {
        self.generator.xoff_mask()
    }

    /// Is a frame waiting to go out?
    pub fn has_pending(&self) -> bool {
        self.generator.has_pending()
    }

    /// When the XOFF must next be refreshed (None: no priority in XOFF).
    pub fn refresh_at(&self) -> Option<Time> {
        self.generator.poll_timeout()
    }

    /// Queue the refresh of the XOFF priorities if it is due at `now`; true if it was.
    pub fn refresh(&mut self, now: Time) -> bool {
        if self.generator.poll_timeout().is_some_and(|t| t <= now) {
            self.generator.handle_timeout(now);
            return true;
        }
        false
    }

    /// The frame to send at `now`, counted in `counters`, and the request it answers.
    /// With PAUSE: the request's pause time if it pauses anything, 0 once no priority is
    /// held; nothing when a priority resumes while another still holds the link (the
    /// request is taken all the same).
    #[inline]
    pub fn take_frame(
        &mut self,
        now: Time,
        counters: &mut PortCounters,
    ) -> Option<(ControlFrame, PfcRequest)> {
        let req = self.generator.take_frame(now)?;
        let frame = match self.setup.mode {
            FlowControl::Pfc => {
                counters.count_pfc_sent(req.enable, &req.quanta, now);
                ControlFrame::Pfc {
                    enable: req.enable,
                    quanta: req.quanta,
                }
            }
            FlowControl::Pause => {
                let quanta = if req.xoff_mask() != 0 {
                    req.quanta.iter().copied().max().unwrap_or(0)
                } else if self.generator.xoff_mask() == 0 {
                    0
                } else {
                    return None;
                };
                counters.count_pause_sent();
                ControlFrame::Pause { quanta }
            }
            // A port without pause frames takes the request and sends nothing.
            FlowControl::Cbfc | FlowControl::None => return None,
        };
        Some((frame, req))
    }

    /// Take a frame received at `now`: the pauses it asks for are loaded (or only counted,
    /// on a port that does not obey), or it is refused for the reason given.
    #[inline]
    pub fn receive(
        &mut self,
        now: Time,
        frame: ControlFrame,
        counters: &mut PortCounters,
    ) -> Result<Heard, DropReason> {
        match (frame, self.setup.mode) {
            (ControlFrame::Pfc { enable, quanta }, FlowControl::Pfc) => {
                let enable = enable & self.setup.honoured;
                if enable == 0 && self.setup.unhonoured == Unhonoured::Drop {
                    return Err(DropReason::PfcNotEnabled);
                }
                if self.setup.obey {
                    self.timers.receive(now, enable, &quanta);
                }
                counters.count_pfc_received(enable, &quanta);
                Ok(Heard::Pfc { enable, quanta })
            }
            (ControlFrame::Pfc { .. }, _) => Err(DropReason::PfcNotEnabled),
            (ControlFrame::Pause { quanta }, FlowControl::Pause) => {
                if self.setup.obey {
                    self.timers.receive(now, 0xFF, &[quanta; PRIORITIES]);
                }
                counters.rx_pause_frames += 1;
                Ok(Heard::Pause { quanta })
            }
            (ControlFrame::Pause { .. }, _) => Err(DropReason::Pause8023xIgnored),
            (ControlFrame::Credit(_), _) => Err(DropReason::CbfcNotEnabled),
            (ControlFrame::Retry(_), _) => Err(DropReason::LlrNotEnabled),
        }
    }
}
