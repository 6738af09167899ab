"""The graph questions of ``explore.flow``, on graphs drawn by hand: a bound never makes a dead
end, a way out through another state counts, loops are found once, routes are shortest."""

from __future__ import annotations

from emulator.explore.edges import Move, moves
from emulator.explore.flow import dead_ends, fresh, loops, route
from emulator.explore.graph import START, Edge, Graph
from emulator.explore.states import Choice, State

MENU = State("recognize", ("menu",), choices=(Choice("a", "1", ()),))
OTHER = State("recognize", ("other",), choices=(Choice("a", "1", ()),))


def edge(source: str, move: Move, to: str | None, end: str | None = None) -> Edge:
    return Edge(source, move, to, end, "call")


def every_move(graph: Graph, source: str, to: str | None, end: str | None = None) -> None:
    """Every move ``moves`` gives ``source``, all leading to ``to`` (or ``end``)."""
    graph.edges += [edge(source, m, to, end) for m in moves(graph.states[source])]


def test_a_state_whose_every_move_comes_back_is_a_dead_end_and_a_way_out_elsewhere_is_not() -> None:
    graph = Graph(states={"m": MENU, "o": OTHER})
    graph.edges.append(edge(START, Move("call", (), "call"), "m"))
    every_move(graph, "m", "o")
    every_move(graph, "o", "o")
    assert dead_ends(graph) == ["m", "o"]
    graph.edges[-1] = edge("o", Move("press 1", ("press 1",), choice="a"), None, "bot hung up")
    assert dead_ends(graph) == []  # o ends well, and m reaches o
    graph.edges[-1] = edge("o", Move("press 1", ("press 1",), choice="a"), None, "caller hung up")
    assert dead_ends(graph) == ["m", "o"]  # the caller's own hang-up is no way out


def test_a_state_cut_off_by_a_bound_is_never_a_dead_end() -> None:
    graph = Graph(states={"m": MENU, "o": OTHER})
    every_move(graph, "m", "o")
    graph.edges.append(edge("o", Move("press 1", ("press 1",), choice="a"), "o"))  # the rest unrun
    assert dead_ends(graph) == []


def test_loops_are_found_once_with_the_edges_of_their_cycle() -> None:
    silence = Move("silence 6s", ("silence 6s",), "silence")
    graph = Graph(states={"m": MENU, "o": OTHER})
    graph.edges += [edge("m", silence, "o"), edge("o", silence, "o")]
    [cycle] = loops(graph, "silence")
    assert [(e.source, e.to) for e in cycle] == [("o", "o")]
    assert loops(graph, "wrong") == []


def test_route_is_the_shortest_way_to_a_good_end_and_fresh_skips_retries() -> None:
    press = Move("press 1", ("press 1",), choice="a")
    wrong = Move("wrong key 0", ("press 0",), "wrong")
    graph = Graph(states={"m": MENU, "o": OTHER})
    graph.edges += [
        edge(START, Move("call", (), "call"), "m"),
        edge("m", wrong, "o"),
        edge("m", press, None, "bot hung up"),
        edge("o", press, None, "platform hung up: callback delivery failed"),
    ]
    assert route(graph, "m") == [press]
    assert route(graph, "o") is None
    assert fresh(graph) == {"m"}  # o is only met after a wrong key
