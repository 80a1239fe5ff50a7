"""attnlab.train"""
